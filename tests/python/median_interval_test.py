"""bench/median_interval.py: the order statistics that bound a median, and the verdicts against a
budget that bench/dl_profiler_cost.sh prints (and keeps adding rounds on while unresolved)."""
import os
import subprocess
import sys
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import median_interval  # noqa: E402


class MedianInterval(unittest.TestCase):
    def test_nine_rounds_drop_one_value_at_each_end(self):
        # P(Binomial(9, 1/2) <= 1) = 10/512: the 2nd and 8th values hold the median with 96.1%.
        self.assertEqual(median_interval.median_interval([9, 1, 8, 2, 7, 3, 6, 4, 5]), (2, 8))

    def test_six_rounds_need_their_extremes_and_five_are_too_few(self):
        self.assertEqual(median_interval.median_interval([3, 1, 2, 6, 5, 4]), (1, 6))
        self.assertIsNone(median_interval.median_interval([1, 2, 3, 4, 5]))

    def test_more_rounds_drop_more_values(self):
        # n = 20: P(B <= 5) = 0.0207, P(B <= 6) = 0.0577, so the 6th and 15th values.
        self.assertEqual(median_interval.median_interval(list(range(1, 21))), (6, 15))

    def test_verdicts_against_a_budget(self):
        self.assertEqual(median_interval.verdict((0.2, 0.9), 1.0), "within")
        self.assertEqual(median_interval.verdict((1.1, 4.0), 1.0), "over")
        self.assertEqual(median_interval.verdict((-2.0, 2.0), 1.0), "unresolved")
        self.assertEqual(median_interval.verdict(None, 1.0), "too-few-rounds")
        self.assertEqual(median_interval.verdict((0.0, 9.0), None), "-")

    def test_the_command_prints_median_interval_and_verdict(self):
        out = subprocess.run([sys.executable, os.path.join(BENCH, "median_interval.py"), "--budget", "1",
                              "0.22", "0.26", "0.37", "0.30", "0.25", "0.28"],
                             capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual(out, ["0.270", "0.220", "0.370", "within"])

    def test_a_confidence_outside_zero_to_one_is_refused(self):
        run = subprocess.run([sys.executable, os.path.join(BENCH, "median_interval.py"), "--confidence", "1.5",
                              "1", "2"], capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("--confidence must lie between 0 and 1", run.stderr)


if __name__ == "__main__":
    unittest.main()
