#!/usr/bin/python3
"""Writes one chart of `commlens report --format html` as an SVG file, for documentation that shows
the report's own figures: the first <svg> after the caption or heading whose text starts with HEADING.

usage: report-figure.py COMMLENS DATABASE HEADING OUTPUT.svg
example: report-figure.py build/cli/commlens run/commlens.sqlite "Time per training step" steps.svg
"""
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    commlens, database, heading, output = sys.argv[1:]
    html = subprocess.run([commlens, "report", "--format", "html", database], check=True,
                          capture_output=True, text=True).stdout
    found = re.search(r"<(?:h[23]|figcaption)[^>]*>" + re.escape(heading) + r".*?(<svg\b.*?</svg>)", html, re.S)
    if found is None:
        sys.exit(f"report-figure: no chart under a caption or heading starting with {heading!r} in {database}")
    with open(output, "w", encoding="utf-8") as svg:
        svg.write(found.group(1) + "\n")


if __name__ == "__main__":
    main()
