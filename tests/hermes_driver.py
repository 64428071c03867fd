"""Drives Hermes Agent's own shell-hook machinery for tests/integration/hermes.rs.

Run with the Python of a virtual environment that has the released
``hermes-agent`` package (scripts/test makes one), with ``HERMES_HOME``
pointing at a directory whose ``config.yaml`` has a ``hooks:`` block. It
registers the configured hooks the way Hermes' CLI does at startup
(``agent.shell_hooks.register_from_config``; consent comes from
``HERMES_ACCEPT_HOOKS=1``, as Hermes documents for non-interactive runs),
prints one JSON line ``{"pid": …, "registered": [events…]}``, then reads one
JSON request per line on stdin and answers each with one JSON line:

* ``{"event": NAME, "kwargs": {…}}`` fires ``hermes_cli.plugins.invoke_hook``
  as Hermes' agent loop does; the answer holds the hook results (the
  decisions Hermes read from the hooks' stdout), the warnings Hermes logged
  (a hook that failed, timed out or printed a non-JSON line) and the time
  taken in milliseconds.
* ``{"raw": TEXT, "event": NAME}`` runs the configured command of that event
  through Hermes' own spawner with TEXT on stdin, and answers with its exit
  code, stdout and stderr.

This process is the hooks' parent, as the Hermes CLI or gateway is.
"""

import json
import logging
import os
import sys
import time


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def main():
    from agent import shell_hooks
    from hermes_cli.config import load_config
    from hermes_cli.plugins import invoke_hook

    collect = Collect()
    logging.getLogger("agent.shell_hooks").addHandler(collect)
    logging.getLogger("hermes_cli.plugins").addHandler(collect)

    config = load_config()
    specs = shell_hooks.register_from_config(config, accept_hooks=False)
    print(json.dumps({
        "pid": os.getpid(),
        "registered": sorted(s.event for s in specs),
        "warnings": collect.records,
    }), flush=True)

    for line in sys.stdin:
        request = json.loads(line)
        collect.records = []
        if "raw" in request:
            spec = next(s for s in specs if s.event == request["event"])
            r = shell_hooks._spawn(spec, request["raw"])
            answer = {k: r[k] for k in ("returncode", "stdout", "stderr", "error")}
        else:
            t0 = time.monotonic()
            results = invoke_hook(request["event"], **request.get("kwargs", {}))
            answer = {
                "results": [repr(r) for r in results],
                "ms": (time.monotonic() - t0) * 1000.0,
            }
        answer["warnings"] = collect.records
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
