// The viewer's detail views over crafted databases whose rows the test states (the calls are
// tests/support/databases/trace_database.cpp's): training steps split by their NVTX ranges, NCCL
// calls with their kernels and the optional nccl_calls side table, lanes resized by dragging, and
// histograms of several functions and of two runs overlaid. Every check reads widget state.
#include "compare_view.hpp"
#include "format.hpp"
#include "histogram_view.hpp"
#include "main_window.hpp"
#include "palette.hpp"
#include "shown_window.hpp"
#include "steps_view.hpp"
#include "timeline_legend.hpp"
#include "timeline_view.hpp"

#include "trace_database.hpp"

#include <QMouseEvent>
#include <QtTest>

using namespace commlens::viewer;
namespace test = commlens::test;

namespace {

// Two ranks, as examples/dl's trainer marks a step. Step 1: rank 0 105 us... (means over ranks):
//   rank 0 [100, 200) us: forward 30, backward 40, allreduce 20, optimizer 5: 5 us other; a
//          "backward" nested inside forward is no part of the step's own split;
//   rank 1 [100, 210) us: forward 30, backward 50, allreduce 20, optimizer 5: 5 us other.
// Step 2, rank 0 only: [300, 350) us with a forward of 10 us.
constexpr const char* kStepRanges = R"sql(
INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES
  (0, 100000, 200000, NULL, 'step'), (0, 100000, 130000, NULL, 'forward'),
  (0, 110000, 111000, NULL, 'backward'), (0, 130000, 170000, NULL, 'backward'),
  (0, 170000, 190000, NULL, 'allreduce'), (0, 190000, 195000, NULL, 'optimizer'),
  (1, 100000, 210000, NULL, 'step'), (1, 100000, 130000, NULL, 'forward'),
  (1, 130000, 180000, NULL, 'backward'), (1, 180000, 200000, NULL, 'allreduce'),
  (1, 200000, 205000, NULL, 'optimizer'),
  (0, 300000, 350000, NULL, 'step'), (0, 300000, 310000, NULL, 'forward');
)sql";

// One ncclAllReduce on rank 0 (call 500, 20 to 24 us) that launched one NCCL kernel (21 to 23 us) on
// CUPTI's stream 9, its CUDA events 20.5 to 23.5 us; a kernel outside any call on stream 7.
constexpr const char* kNccl = R"sql(
INSERT INTO run (key, value) VALUES ('cuda_collectors', 'on');
INSERT INTO functions (id, name, family) VALUES (5, 'nccl:AllReduce', 'nccl_collective');
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag,
                       comm_id, implementation, phase)
  VALUES (500, 0, 0, 5, 20000, 24000, 4096, 4096, -1, 0, 4611686018427387904, 0, 0);
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 21000, 23000, 0, 9, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL', 500, 31),
  (0, 26000, 27000, 0, 7, 'scale_kernel', NULL, 32);
INSERT INTO device_spans (call_id, rank, start_ns, end_ns) VALUES (500, 0, 20500, 23500);
)sql";

// What the NCCL side table, when a file has it, says about call 500.
constexpr const char* kNcclCalls = R"sql(
INSERT INTO nccl_calls (call_id, rank, datatype, op, stream, root, peer, group_depth)
  VALUES (500, 0, 7, 0, 4096, NULL, NULL, 1);
)sql";

// The host's CUDA API calls of rank 0 around kNccl's allreduce. Thread 0 (Linux thread 4242): the
// launch of the NCCL kernel inside the allreduce, the launch of fill_kernel on stream 7, a
// cudaMemcpy around the driver call that made a 1 KiB copy on stream 7, and a
// cudaStreamSynchronize (no GPU work). Another thread (4343, no MPI call) synchronised the device.
constexpr const char* kCudaApi = R"sql(
INSERT INTO cuda_api_functions (id, domain, name) VALUES (211, 'runtime', 'cudaLaunchKernel'),
  (31, 'runtime', 'cudaMemcpy'), (65560, 'driver', 'cuMemcpyHtoD_v2'), (131, 'runtime', 'cudaStreamSynchronize'),
  (165, 'runtime', 'cudaDeviceSynchronize');
INSERT INTO cuda_api_calls (rank, thread, system_thread, start_ns, end_ns, function_id, correlation_id) VALUES
  (0, 0, 4242, 20200, 20400, 211, 31), (0, 0, 4242, 22000, 22200, 211, 33), (0, 0, 4242, 23000, 23800, 31, 40),
  (0, 0, 4242, 23100, 23700, 65560, 41), (0, 0, 4242, 23850, 23950, 131, 42),
  (0, NULL, 4343, 21500, 22000, 165, 50);
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 22500, 23000, 0, 7, 'fill_kernel', NULL, 33);
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, bytes, stream,
                         copy_kind, path, link, mpi_call_id, correlation_id, runtime_correlation_id) VALUES
  (0, 23200, 23600, 0, 0, 0, 'pinned', 'device', 1024, 7, 'HtoD', 'host_staged', NULL, NULL, 41, 40);
)sql";

QString crafted(const QString& directory, const char* name, std::initializer_list<const char*> extras,
                int time_scale = 1) {
  const auto path = QDir(directory).filePath(QLatin1String(name));
  test::TestDatabase database(path.toStdString());
  test::fill_trace_run(database, time_scale);
  for (const char* sql : extras)
    database.execute(sql);
  return path;
}

std::vector<std::pair<QString, double>> segments_of(const Bar& bar) {
  std::vector<std::pair<QString, double>> segments;
  for (const auto& segment : bar.segments)
    segments.emplace_back(segment.name, segment.value);
  return segments;
}

// Every label is a time with its unit ("0 ns", "20 us", "1.5 ms").
bool all_times(const QStringList& labels) {
  return !labels.isEmpty() && std::all_of(labels.begin(), labels.end(), [](const QString& label) {
    return label.endsWith(QLatin1String(" ns")) || label.endsWith(QLatin1String(" us")) ||
           label.endsWith(QLatin1String(" ms")) || label.endsWith(QLatin1String(" s"));
  });
}

void send_mouse(QWidget* widget, QEvent::Type type, QPoint position, Qt::MouseButtons buttons) {
  QMouseEvent event(type, position, widget->mapToGlobal(position), Qt::LeftButton, buttons, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

} // namespace

class ViewerDetailTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY(directory_.isValid());
    steps_ = crafted(directory_.path(), "steps.sqlite", {kStepRanges});
    nccl_ = crafted(directory_.path(), "nccl.sqlite", {kNccl});
    nccl_table_ = crafted(directory_.path(), "nccl-table.sqlite", {kNccl, kNcclCalls});
    cuda_api_ = crafted(directory_.path(), "cuda-api.sqlite", {kNccl, kCudaApi});
    plain_ = crafted(directory_.path(), "plain.sqlite", {});
    slower_ = crafted(directory_.path(), "slower.sqlite", {}, 2);
  }

  void stepsAreColumnsSplitByTheirNvtxRanges() {
    MainWindow window;
    test_support::open_shown(window, steps_);
    const auto& steps = *window.steps();
    QVERIFY(steps.from_ranges());
    QVERIFY2(steps.status().startsWith(QStringLiteral("2 steps on 2 ranks, from NVTX ranges")),
             qPrintable(steps.status()));
    QCOMPARE(steps.chart().orientation(), Qt::Vertical);
    const auto& bars = steps.chart().bars();
    QCOMPARE(bars.size(), std::size_t{2});
    QCOMPARE(bars[0].label, QStringLiteral("step 1"));
    QCOMPARE(segments_of(bars[0]), (std::vector<std::pair<QString, double>>{{"forward", 30000},
                                                                            {"backward", 45000},
                                                                            {"communication", 20000},
                                                                            {"optimizer", 5000},
                                                                            {"other", 5000}}));
    QCOMPARE(bars[0].total(), 105000.0);
    QCOMPARE(segments_of(bars[1]),
             (std::vector<std::pair<QString, double>>{{"forward", 10000}, {"other", 40000}}));
    // The table has the steps as columns, a row per part and the step's whole time last.
    QCOMPARE(steps.headers(), (QStringList{"Part", "step 1", "step 2"}));
    QCOMPARE(steps.function_rows(), 6);
    QCOMPARE(steps.cell(2, 0), QStringLiteral("communication"));
    QCOMPARE(steps.cell(2, 1), format_duration(20000));
    QCOMPARE(steps.cell(5, 1), format_duration(105000));
    QCOMPARE(steps.cell(5, 2), format_duration(50000));
    QVERIFY2(all_times(steps.chart().tick_labels()), qPrintable(steps.chart().tick_labels().join(',')));

    // Without step ranges the view falls back to the MPI_Pcontrol steps (none here: it says why).
    MainWindow plain;
    test_support::open_shown(plain, plain_);
    QVERIFY(!plain.steps()->from_ranges());
    QVERIFY2(plain.steps()->status().contains(QStringLiteral("No training steps")),
             qPrintable(plain.steps()->status()));
  }

  void ncclCallsAreDrawnWithTheirKernelsAndGpuSpans() {
    MainWindow window;
    test_support::open_shown(window, nccl_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    canvas->show_range(19000, 28000);
    canvas->wait_for_data();
    // Rank 0, thread 0 is the first call lane; its stream lanes follow: 7, 9, then the span of a
    // call without an nccl_calls row (no side table here, so no stream is known for it).
    const auto& streams = window.database()->gpu_streams;
    QCOMPARE(streams.size(), std::size_t{3});
    QCOMPARE(streams[1].stream, std::optional<std::int64_t>(9));
    QVERIFY(streams[2].spans_without_stream);
    QCOMPARE(streams[2].nccl_spans, std::uint64_t{1});
    const auto& rows = canvas->rows();
    std::size_t lane = rows.size(), nccl_stream = rows.size(), spans = rows.size();
    for (std::size_t row = 0; row < rows.size(); ++row) {
      if (rows[row].rank == 0 && rows[row].kind == TimelineRowKind::Calls && lane == rows.size())
        lane = row;
      if (rows[row].kind == TimelineRowKind::Stream && rows[row].index == 1)
        nccl_stream = row;
      if (rows[row].kind == TimelineRowKind::Stream && rows[row].index == 2)
        spans = row;
    }
    QVERIFY(lane < nccl_stream && nccl_stream < spans && spans < rows.size());
    const auto x_of = [&](std::int64_t time_ns) {
      return TimelineCanvas::kGutterWidth + canvas->viewport().x_of(time_ns);
    };
    const auto call =
        canvas->describe_at(QPoint(static_cast<int>(x_of(22000)), canvas->row_rect(lane).center().y()));
    QVERIFY2(call.contains(QStringLiteral("<b>nccl:AllReduce</b>")), qPrintable(call));
    QVERIFY2(call.contains(QStringLiteral(
                 "GPU kernels launched: ncclDevKernel_AllReduce_Sum_f32_RING_LL (2 us on GPU 0)")),
             qPrintable(call));
    QVERIFY2(
        call.contains(QStringLiteral("on the GPU 3 us (from CUDA events on its stream), 500 ns after the "
                                     "call began")),
        qPrintable(call));
    QVERIFY2(!call.contains(QStringLiteral("NCCL:")), qPrintable(call)); // no side table in this file
    const auto span =
        canvas->describe_at(QPoint(static_cast<int>(x_of(22000)), canvas->row_rect(spans).center().y()));
    QVERIFY2(span.contains(QStringLiteral("<b>nccl:AllReduce</b> on the GPU &middot; call id 500 of rank 0")),
             qPrintable(span));
    // Dashed lines from the call's start on its lane down to its span and to its kernel; none for
    // the other kernel.
    const auto links = canvas->kernel_links();
    QCOMPARE(links.size(), std::size_t{2});
    for (const auto& link : links) {
      QCOMPARE(link.x1(), x_of(20000));
      QCOMPARE(link.y1(), double(canvas->row_rect(lane).bottom()));
    }
    QCOMPARE(links[0].x2(), x_of(21000));
    QVERIFY(canvas->row_rect(nccl_stream).contains(links[0].p2().toPoint()));
    QCOMPARE(links[1].x2(), x_of(20500));
    QVERIFY(canvas->row_rect(spans).contains(links[1].p2().toPoint()));
  }

  void cudaApiCallsHaveARowPerThreadLinkedToTheirGpuWork() {
    MainWindow window;
    test_support::open_shown(window, cuda_api_);
    window.show_view(QStringLiteral("timeline"));
    const auto& threads = window.database()->cuda_api_threads;
    QCOMPARE(threads.size(), std::size_t{2});
    QCOMPARE(threads[0].thread, std::optional<int>(0));
    QCOMPARE(threads[0].calls, std::uint64_t{5});
    QCOMPARE(threads[1].thread, std::optional<int>());
    QCOMPARE(threads[1].system_thread, std::int64_t{4343});
    auto* canvas = window.timeline()->canvas();
    canvas->show_range(19000, 24000); // the trace's end
    canvas->wait_for_data();
    // Rank 0's rows: its two call lanes, then a CUDA API row per thread, then its streams 7, 9 and
    // the spans.
    const auto& rows = canvas->rows();
    std::vector<TimelineRowKind> kinds;
    std::size_t api_row = rows.size(), stream_7 = rows.size(), stream_9 = rows.size();
    for (std::size_t row = 0; row < rows.size(); ++row) {
      if (rows[row].rank != 0 || rows[row].kind == TimelineRowKind::Ranges)
        continue;
      kinds.push_back(rows[row].kind);
      if (rows[row].kind == TimelineRowKind::CudaApi && rows[row].index == 0)
        api_row = row;
      if (rows[row].kind == TimelineRowKind::Stream && rows[row].index == 0)
        stream_7 = row;
      if (rows[row].kind == TimelineRowKind::Stream && rows[row].index == 1)
        stream_9 = row;
    }
    QCOMPARE(kinds, (std::vector<TimelineRowKind>{TimelineRowKind::Calls, TimelineRowKind::Calls,
                                                  TimelineRowKind::CudaApi, TimelineRowKind::CudaApi,
                                                  TimelineRowKind::Stream, TimelineRowKind::Stream,
                                                  TimelineRowKind::Stream}));
    const auto& api_calls = canvas->fetcher().snapshot().api_calls;
    QCOMPARE(api_calls.size(), std::size_t{2});
    QCOMPARE(api_calls[0].size(), std::size_t{5});
    QCOMPARE(api_calls[1].size(), std::size_t{1});
    QCOMPARE(api_calls[0][3].name, std::string("cuMemcpyHtoD_v2"));
    QCOMPARE(api_calls[0][3].depth, 1); // inside the cudaMemcpy that called it
    QCOMPARE(api_calls[0][2].depth, 0);
    QCOMPARE(api_calls[1][0].name, std::string("cudaDeviceSynchronize"));
    // A dashed line from each launch down to its kernel and from the cudaMemcpy (not also from the
    // driver call inside it) to its copy; the synchronisations made no GPU work.
    const auto x_of = [&](std::int64_t time_ns) {
      return TimelineCanvas::kGutterWidth + canvas->viewport().x_of(time_ns);
    };
    const auto links = canvas->api_links();
    QCOMPARE(links.size(), std::size_t{3});
    std::vector<std::pair<double, double>> ends;
    for (const auto& link : links) {
      QVERIFY(canvas->row_rect(api_row).contains(link.p1().toPoint()));
      ends.emplace_back(link.x1(), link.x2());
    }
    std::sort(ends.begin(), ends.end());
    QCOMPARE(ends, (std::vector<std::pair<double, double>>{
                       {x_of(20200), x_of(21000)}, {x_of(22000), x_of(22500)}, {x_of(23000), x_of(23200)}}));
    for (const auto& link : links)
      QVERIFY(canvas->row_rect(link.x2() == x_of(21000) ? stream_9 : stream_7).contains(link.p2().toPoint()));
    QCOMPARE(canvas->kernel_links().size(), std::size_t{2}); // the NCCL call's lines, as without API rows
    // The tooltip names the call, its thread and what it launched; the gutter names the row's thread.
    const auto top = canvas->row_rect(api_row).top() + 3;
    const auto launch = canvas->describe_at(QPoint(static_cast<int>(x_of(22100)), top));
    QVERIFY2(launch.contains(QStringLiteral("<b>cudaLaunchKernel</b>")), qPrintable(launch));
    QVERIFY2(launch.contains(QStringLiteral("thread 0 (Linux thread 4242)")), qPrintable(launch));
    QVERIFY2(launch.contains(QStringLiteral("launched fill_kernel on GPU0 s7")), qPrintable(launch));
    const auto memcpy = canvas->describe_at(QPoint(static_cast<int>(x_of(23400)), top));
    QVERIFY2(memcpy.contains(QStringLiteral("<b>cudaMemcpy</b>")), qPrintable(memcpy));
    QVERIFY2(memcpy.contains(QStringLiteral("copied 1KiB on GPU0 s7")), qPrintable(memcpy));
    const auto gutter = canvas->describe_at(QPoint(10, canvas->row_rect(api_row + 1).center().y()));
    QVERIFY2(gutter.contains(QStringLiteral("Linux thread 4343, which made no MPI or NCCL call")),
             qPrintable(gutter));
    const auto legend = legend_entries(*window.database());
    QVERIFY(std::any_of(legend.begin(), legend.end(), [](const LegendEntry& entry) {
      return entry.name == QStringLiteral("CUDA API calls") && entry.color == api_call_color();
    }));
  }

  void gpuSpansShareTheLaneOfTheStreamTheirKernelsRanOn() {
    // With the side table, call 500 names its stream (0x1000) and its kernel ran on CUPTI's stream
    // 9: the span is drawn behind the kernel on that stream's lane.
    MainWindow window;
    test_support::open_shown(window, nccl_table_);
    const auto& streams = window.database()->gpu_streams;
    QCOMPARE(streams.size(), std::size_t{2});
    QCOMPARE(streams[1].stream, std::optional<std::int64_t>(9));
    QCOMPARE(streams[1].nccl_stream, std::optional<std::int64_t>(4096));
    QCOMPARE(streams[1].nccl_spans, std::uint64_t{1});
    auto* canvas = window.timeline()->canvas();
    canvas->show_range(19000, 28000);
    canvas->wait_for_data();
    const auto& work = canvas->fetcher().snapshot().streams[1];
    QCOMPARE(work.spans.size(), std::size_t{1});
    QCOMPARE(work.spans[0].call_id, std::int64_t{500});
    QCOMPARE(work.kernels.size(), std::size_t{1});
    QVERIFY(canvas->fetcher().snapshot().streams[0].spans.empty());
  }

  void colourFamiliesNeverShareAHueBand() {
    // MPI families, NCCL calls, copies and kernels each keep to their own band (palette.hpp).
    const auto hue = [](const QColor& color) { return color.hsvHue(); };
    const auto in = [](int value, int first, int last) { return first <= value && value < last; };
    for (const auto* name : {"nccl:AllReduce", "nccl:Broadcast", "nccl:Send", "nccl:AllGather"})
      QVERIFY2(in(hue(function_color(name)), 164, 180), name);
    for (const auto* name : {"MPI_Isend", "MPI_Send", "MPI_Sendrecv", "MPI_Put"})
      QVERIFY2(in(hue(function_color(name)), 18, 40), name);
    for (const auto* name : {"MPI_Irecv", "MPI_Recv", "MPI_Probe", "MPI_Get"})
      QVERIFY2(in(hue(function_color(name)), 44, 58), name);
    for (const auto* name :
         {"MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Alltoall", "MPI_Reduce_scatter"})
      QVERIFY2(in(hue(function_color(name)), 342, 360), name);
    for (const auto* name : {"MPI_Wait", "MPI_Waitall", "MPI_Test"})
      QVERIFY2(in(hue(function_color(name)), 196, 220), name);
    // Set-up and the rest are grey (hardly any colour), NCCL's set-up a pale teal.
    for (const auto* name : {"MPI_Init", "MPI_Finalize", "MPI_Comm_split", "MPI_Pcontrol"})
      QVERIFY2(function_color(name).hsvSaturation() < 40, name);
    QVERIFY(function_color("nccl:CommInitRank").hsvSaturation() < 100);
    for (const auto* path : {"host_staged", "peer", "ipc", "same_device", "managed"})
      QVERIFY2(in(hue(copy_path_color(path)), 245, 310), path);
    for (const auto* kernel : {"gemm", "elementwise_kernel", "reduce_kernel", "Kernel2<cutlass>"})
      QVERIFY2(in(hue(kernel_color(kernel, false)), 95, 140), kernel);
    QVERIFY(in(hue(kernel_color({}, true)), 185, 195));
    QVERIFY(in(hue(api_call_color()), 60, 95)); // the host's CUDA API calls: between amber and green
    QCOMPARE(call_family(QStringLiteral("nccl:Send")), CallFamily::Nccl);
    QCOMPARE(call_family(QStringLiteral("nccl:CommInitRankConfig")), CallFamily::NcclSetup);
  }

  void ncclSideTableAddsToTheCallsTooltip() {
    MainWindow window;
    test_support::open_shown(window, nccl_table_);
    QVERIFY(window.database()->has_nccl_calls);
    auto* canvas = window.timeline()->canvas();
    canvas->show_range(19000, 28000);
    canvas->wait_for_data();
    const auto* lanes = &canvas->fetcher().snapshot().lanes;
    QVERIFY(!lanes->empty());
    const auto& calls = (*lanes)[0].calls;
    const auto found =
        std::find_if(calls.begin(), calls.end(), [](const auto& call) { return call.id == 500; });
    QVERIFY(found != calls.end());
    const auto text = canvas->describe({window.database()->timeline.lanes[0], *found});
    QVERIFY2(text.contains(QStringLiteral("NCCL: datatype <b>ncclFloat32</b>, op <b>ncclSum</b>, stream "
                                          "<b>0x1000</b>, group depth <b>1</b>")),
             qPrintable(text));
    // A call without a row (summary mode, or a file written before the table) reads as before.
    MainWindow without;
    test_support::open_shown(without, nccl_);
    auto* other = without.timeline()->canvas();
    other->show_range(19000, 28000);
    other->wait_for_data();
    const auto& plain_calls = other->fetcher().snapshot().lanes[0].calls;
    const auto plain =
        std::find_if(plain_calls.begin(), plain_calls.end(), [](const auto& call) { return call.id == 500; });
    QVERIFY(plain != plain_calls.end());
    QVERIFY(
        !other->describe({without.database()->timeline.lanes[0], *plain}).contains(QStringLiteral("NCCL:")));
  }

  void draggingARanksLowerEdgeResizesItsLanes() {
    MainWindow window;
    test_support::open_shown(window, plain_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    canvas->wait_for_data();
    // Rank 0 has two lanes (two threads), rank 1 one: at first all three share the height evenly.
    const int rank0 = canvas->lanes_height(0), rank1 = canvas->lanes_height(1);
    QVERIFY2(std::abs(rank0 - 2 * rank1) <= 2, qPrintable(QStringLiteral("%1 %2").arg(rank0).arg(rank1)));
    const auto edge = QPoint(TimelineCanvas::kGutterWidth + 100, canvas->row_rect(1).bottom());
    QCOMPARE(canvas->resize_handle_at(edge), std::optional<int>(0));
    QVERIFY(!canvas->resize_handle_at(edge - QPoint(0, 20)));
    const auto start = canvas->viewport().start_ns(), end = canvas->viewport().end_ns();
    send_mouse(canvas, QEvent::MouseButtonPress, edge, Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseMove, edge + QPoint(0, 60), Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseButtonRelease, edge + QPoint(0, 60), Qt::NoButton);
    QVERIFY2(std::abs(canvas->lanes_height(0) - (rank0 + 60)) <= 2,
             qPrintable(QString::number(canvas->lanes_height(0))));
    QVERIFY2(std::abs(canvas->lanes_height(1) - (rank1 - 60)) <= 2,
             qPrintable(QString::number(canvas->lanes_height(1))));
    // The lanes still fill the view; the drag neither panned nor selected anything.
    QVERIFY(canvas->row_rect(canvas->rows().size() - 1).bottom() >= canvas->height() - 6);
    QCOMPARE(canvas->viewport().start_ns(), start);
    QCOMPARE(canvas->viewport().end_ns(), end);
    QVERIFY(!canvas->selection());
    // Folding a rank still works after a resize, and unfolding gives it its dragged height back.
    const int dragged = canvas->lanes_height(0);
    canvas->toggle_collapsed(0);
    QVERIFY(canvas->lanes_height(0) < dragged);
    canvas->toggle_collapsed(0);
    QVERIFY(std::abs(canvas->lanes_height(0) - dragged) <= 1);
  }

  void histogramsOverlayFunctionsAndASecondRun() {
    MainWindow window;
    test_support::open_shown(window, plain_);
    auto* histograms = window.histograms();
    QVERIFY(histograms->select_functions({QStringLiteral("MPI_Send"), QStringLiteral("MPI_Isend")}));
    QCOMPARE(histograms->selected_functions(), (QStringList{"MPI_Send", "MPI_Isend"}));
    const auto& chart = histograms->chart();
    QCOMPARE(chart.legend(), (QStringList{"MPI_Send", "MPI_Isend"}));
    // MPI_Send: 4 calls of 1 KiB; MPI_Isend: 4 calls of 8 B; the x axis has both bins.
    QCOMPARE(chart.size_bins(), (std::vector<int>{3, 10}));
    QCOMPARE(chart.series()[0].bins.size(), std::size_t{1});
    QCOMPARE(chart.value_of(chart.series()[0].bins[0]), 4.0);
    QVERIFY(chart.series()[0].color != chart.series()[1].color);
    QCOMPARE(chart.y_axis_title(), QStringLiteral("calls"));

    // A second run (every call twice as long) is overlaid beside each function, named by its file.
    window.compare()->open_second(slower_);
    window.compare()->loader().wait();
    QApplication::processEvents();
    QCOMPARE(chart.series().size(), std::size_t{4});
    QCOMPARE(chart.legend(), (QStringList{"MPI_Send (plain.sqlite)", "MPI_Send (slower.sqlite)",
                                          "MPI_Isend (plain.sqlite)", "MPI_Isend (slower.sqlite)"}));
    histograms->select_metric(HistogramMetric::Time);
    QCOMPARE(chart.value_of(chart.series()[1].bins[0]), 2 * chart.value_of(chart.series()[0].bins[0]));
    QVERIFY2(all_times(chart.y_tick_labels()), qPrintable(chart.y_tick_labels().join(',')));
    QCOMPARE(chart.y_axis_title(), QStringLiteral("time in calls"));
    // One function alone again: one series per run, the legend still telling the runs apart.
    QVERIFY(histograms->select_function(QStringLiteral("MPI_Recv")));
    QCOMPARE(chart.legend(), (QStringList{"MPI_Recv (plain.sqlite)", "MPI_Recv (slower.sqlite)"}));
    window.histograms()->set_second_database(nullptr);
    QCOMPARE(chart.series().size(), std::size_t{1});
    QVERIFY(chart.legend().isEmpty());
  }

private:
  QTemporaryDir directory_;
  QString steps_, nccl_, nccl_table_, cuda_api_, plain_, slower_;
};

QTEST_MAIN(ViewerDetailTest)
#include "viewer_detail_test.moc"
