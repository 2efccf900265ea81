"""What the peers' tests share: a tally of checks (check(), and the closing line "N passed, N
failed" that CTest logs and the CI read) and run_script, a Python script run as a test runs it."""
import os
import subprocess
import sys


def run_script(script, args, env_extra=None, timeout=600):
    """The CompletedProcess (text) of `script args` under this interpreter, the environment plus
    env_extra."""
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, script] + args, capture_output=True, text=True,
                          env=env, timeout=timeout)


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
