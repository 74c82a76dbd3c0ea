"""The HTML report in a real browser: Debian's chromium, headless, renders the report of a real run
(examples/finding_patterns churn on 4 ranks, trace mode: findings, training steps, partners, message
sizes) and a probe added to a copy of the page reports the rendered layout, which is checked here:
the findings come first, every contents link leads to its section, nothing overflows the page
sideways, every chart has a value axis with units and fits the width, is not taller than wide,
keeps its labels inside itself, and message-size histograms exist only for functions that move data.

Environment (tests/analysis/CMakeLists.txt): COMMLENS_CLI, COMMLENS_FINDING_PATTERNS, COMMLENS_MPIRUN,
COMMLENS_CHROMIUM, COMMLENS_LIBRARY.
"""

import json
import os
import re
import subprocess
import tempfile
import unittest

# Reports the layout as JSON in a <pre id="layout-probe"> once the page has loaded; the report
# itself holds no script, so this is added to a copy.
PROBE = r"""
<script>
window.addEventListener('load', () => {
  const box = element => {
    const r = element.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height};
  };
  const inside = (inner, outer) => inner.x >= outer.x - 1 && inner.y >= outer.y - 1 &&
      inner.x + inner.width <= outer.x + outer.width + 1 && inner.y + inner.height <= outer.y + outer.height + 1;
  const layout = {
    viewport: innerWidth,
    scroll_width: document.documentElement.scrollWidth,
    sections: [...document.querySelectorAll('main h2')].map(h => ({id: h.id, ...box(h)})),
    links: [...document.querySelectorAll('nav a')].map(a => a.getAttribute('href')),
    targets: [...document.querySelectorAll('nav a')].map(a => !!document.getElementById(a.getAttribute('href').slice(1))),
    charts: [...document.querySelectorAll('svg.chart')].map(svg => {
      const frame = box(svg);
      const figure = svg.closest('figure');
      return {
        caption: figure ? figure.querySelector('figcaption').textContent : '',
        ...frame,
        parent_width: svg.parentElement.getBoundingClientRect().width,
        axis: [...svg.querySelectorAll('text.axis')].map(t => t.textContent),
        titles: [...svg.querySelectorAll('text.axis-title')].map(t => t.textContent),
        outside: [...svg.querySelectorAll('text')].filter(t => !inside(box(t), frame)).map(t => t.textContent),
      };
    }),
  };
  const pre = document.createElement('pre');
  pre.id = 'layout-probe';
  pre.textContent = JSON.stringify(layout);
  document.body.appendChild(pre);
});
</script>
"""

UNITS = re.compile(r"^-?[0-9.]+ ?(ns|us|ms|s|%|B|KiB|MiB|GiB|TiB)$")


def run_churn(directory):
    output = os.path.join(directory, "out")
    subprocess.run([os.environ["COMMLENS_CLI"], "run", "--quiet", "--mode", "trace", "--output", output, "--",
                    os.environ["COMMLENS_MPIRUN"], "-np", "4", "--oversubscribe",
                    os.environ["COMMLENS_FINDING_PATTERNS"], "churn", "8"], check=True, capture_output=True,
                   timeout=300)
    return output


def render(page, directory, width):
    """The layout chromium gives `page` in a window `width` pixels wide."""
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=directory)
    result = subprocess.run([os.environ["COMMLENS_CHROMIUM"], "--headless", "--no-sandbox", "--disable-gpu",
                             "--disable-background-networking", "--no-first-run", "--disable-component-update",
                             "--disable-sync", f"--user-data-dir={profile}", f"--window-size={width},1000",
                             "--virtual-time-budget=10000", "--dump-dom", "file://" + page],
                            capture_output=True, text=True, timeout=120, check=True)
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', result.stdout, re.S)
    if not found:
        raise AssertionError("no layout from chromium: " + result.stderr[-2000:])
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


class HtmlReportLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="commlens-html-")
        output = run_churn(cls.directory)
        html = subprocess.run([os.environ["COMMLENS_CLI"], "report", output, "--format", "html"],
                              capture_output=True, text=True, check=True, timeout=300).stdout
        cls.html = html
        page = os.path.join(cls.directory, "report.html")
        with open(page, "w", encoding="utf-8") as file:
            file.write(html.replace("</body>", PROBE + "</body>"))
        cls.wide = render(page, cls.directory, 1280)
        cls.narrow = render(page, cls.directory, 700)

    def test_the_report_is_self_contained(self):
        for fetched in ("<script", "<link", "src=", "@import", "url("):
            self.assertNotIn(fetched, self.html)

    def test_findings_come_first(self):
        for layout in (self.wide, self.narrow):
            self.assertEqual(layout["sections"][0]["id"], "findings")
            self.assertLess(layout["sections"][0]["y"], min(chart["y"] for chart in layout["charts"]))

    def test_every_contents_link_leads_to_its_section(self):
        self.assertEqual(self.wide["links"][0], "#findings")
        self.assertTrue(all(self.wide["targets"]), self.wide["links"])
        self.assertIn("#steps", self.wide["links"])
        self.assertIn("#partners", self.wide["links"])

    def test_nothing_overflows_the_page_sideways(self):
        for layout in (self.wide, self.narrow):
            self.assertLessEqual(layout["scroll_width"], layout["viewport"])

    def test_every_chart_fits_its_column_and_is_not_taller_than_wide(self):
        for layout in (self.wide, self.narrow):
            for chart in layout["charts"]:
                self.assertLessEqual(chart["width"], chart["parent_width"] + 1, chart["caption"])
                self.assertLessEqual(chart["height"], chart["width"], chart["caption"])
                self.assertLessEqual(chart["height"], 420, chart["caption"])

    def test_every_chart_has_a_value_axis_with_units_and_keeps_its_labels_inside(self):
        for chart in self.wide["charts"]:
            self.assertGreaterEqual(len(chart["axis"]), 2, chart["caption"])
            self.assertTrue(chart["titles"], chart["caption"])
            self.assertEqual(chart["outside"], [], chart["caption"])
            if chart["caption"] == "Share of each rank's time spent in MPI":
                self.assertTrue(all(UNITS.match(label) for label in chart["axis"]), chart["axis"])

    def test_time_axes_of_steps_and_functions_carry_time_units(self):
        captions = {chart["caption"]: chart for chart in self.wide["charts"]}
        for caption in ("Time per training step", "Functions with the most time"):
            self.assertIn(caption, captions)
            self.assertTrue(all(re.search(r" (ns|us|ms|s)$", label) for label in captions[caption]["axis"]),
                            captions[caption]["axis"])

    def test_histograms_are_drawn_for_the_functions_that_move_data_only(self):
        captions = {chart["caption"] for chart in self.wide["charts"]}
        self.assertIn("MPI_Sendrecv", captions)
        for silent in ("MPI_Barrier", "MPI_Finalize", "MPI_Comm_dup", "MPI_Pcontrol", "MPI_Init"):
            self.assertNotIn(silent, captions)


if __name__ == "__main__":
    unittest.main()
