"""What the runtime's Python tests share: checks that collect what failed (each said
as it fails, the test goes on), and the exit status they make at the end."""
failures = []


def check(cond, what):
    """cond, which failed said when false"""
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def verdict():
    """0 when every check held, else 1 (said)."""
    if failures:
        print(f"{len(failures)} failed")
        return 1
    print("ok")
    return 0
