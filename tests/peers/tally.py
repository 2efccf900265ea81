"""A tally of test checks shared by the peers' tests: check(), and the closing line
"N passed, N failed" that CTest logs and the CI read."""
import sys


class Tally:
    def __init__(self):
        self.checks = self.failures = 0

    def check(self, cond, what):
        """Count one check; print what failed."""
        self.checks += 1
        if not cond:
            self.failures += 1
            print("FAIL: %s" % what)
        return bool(cond)

    def finish(self):
        """Print the closing line; the exit status for sys.exit."""
        print("%d passed, %d failed" % (self.checks - self.failures, self.failures))
        sys.stdout.flush()
        return 1 if self.failures else 0
