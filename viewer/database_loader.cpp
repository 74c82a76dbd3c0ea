#include "database_loader.hpp"

#include "commlens/analysis/errors.hpp"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

namespace commlens::viewer {

DatabaseLoader::DatabaseLoader(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, &DatabaseLoader::finish);
}

DatabaseLoader::~DatabaseLoader() {
  cancel();
  watcher_.waitForFinished();
}

void DatabaseLoader::load(const QString& path) {
  cancel();
  watcher_.waitForFinished();
  path_ = path;
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  const auto flag = cancel_flag_;
  // Progress is sent through a queued call: the loader thread must never touch widgets.
  const auto send_progress = [this](int percent, const QString& step) {
    QMetaObject::invokeMethod(
        this, [this, percent, step] { emit progress(percent, step); }, Qt::QueuedConnection);
  };
  watcher_.setFuture(QtConcurrent::run([path, flag, send_progress]() -> Outcome {
    try {
      return {load_database(path.toStdString(), send_progress, *flag), {}, false};
    } catch (const LoadCancelled&) {
      return {nullptr, {}, true};
    } catch (const analysis::AnalysisError& error) {
      return {nullptr, QString::fromStdString(error.what()), false};
    } catch (const std::exception& error) {
      return {nullptr, QStringLiteral("%1: %2").arg(path, QString::fromStdString(error.what())), false};
    }
  }));
}

void DatabaseLoader::cancel() {
  if (cancel_flag_)
    cancel_flag_->store(true);
}

void DatabaseLoader::wait() {
  // A finished load whose signal is still queued counts too: its future stays set until finish().
  if (!watcher_.future().isValid())
    return;
  watcher_.waitForFinished();
  finish();
}

void DatabaseLoader::finish() {
  // wait() may already have delivered this outcome before the watcher's own signal arrived.
  if (!watcher_.future().isValid() || watcher_.future().resultCount() == 0)
    return;
  const Outcome outcome = watcher_.future().result();
  watcher_.setFuture(QFuture<Outcome>());
  if (outcome.cancelled)
    emit cancelled(path_);
  else if (outcome.database)
    emit loaded(outcome.database);
  else
    emit failed(path_, outcome.error);
}

} // namespace commlens::viewer
