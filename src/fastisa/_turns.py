"""Simulated cores that take turns: the machinery under every multi-core launch.

Each participant (an NKI program of an SPMD launch, a PTO rank, a PTO AIC/AIV core) runs in
its own thread, but only one runs at a time: the one holding the *turn*.  A participant keeps
the turn until it finishes or waits for something another participant must do (a barrier, a
signal, a pipe slot), and then hands it to the next participant, in index order, whose wait
is over.  So

* participants that never wait run one after the other, in index order: deterministic;
* participants that wait run interleaved, each up to its wait; the interleaving depends only
  on the program, never on the host's timing;
* a wait nobody can end (every other participant finished, failed or waits too) is found the
  moment no participant can run, and every waiting participant raises
  :class:`~fastisa.errors.ConstraintError` saying who waits where: no hang, no timeout.

The front-ends (``fastisa.nki._launch``, ``fastisa.pto._cores``) build on :class:`Turns`;
it knows nothing of any ISA.
"""

from __future__ import annotations

import contextvars
import threading

from .errors import ConstraintError

__all__ = ["Turns"]

_READY, _BLOCKED, _DONE = "ready", "blocked", "done"


class Turns:
    """Turn-taking scheduler of ``n`` participants (threads), named by ``names``."""

    #: what one participant is called in messages ("program", "rank", "core" ...)
    noun = "participant"

    def __init__(self, n: int, names=None):
        self.n = n
        self.names = list(names) if names is not None else [str(i) for i in range(n)]
        self.cond = threading.Condition()
        self.turn = 0
        self.state = [_READY] * n
        self.waiting = [None] * n          # (predicate, description) while blocked
        self.deadlock = None               # the message, once no participant could run
        self.aborted = None                # set when the launcher was interrupted

    # ---- running ------------------------------------------------------------------------
    def run(self, body):
        """Run ``body(i)`` for every index ``i`` (its own thread, turn-taking).  Returns the
        list of results; raises the first exception a participant raised."""
        results = [None] * self.n
        errors: list = []                  # (order, index, exception)

        def participant(i):
            with self.cond:
                self.cond.wait_for(lambda: self.turn == i or self.aborted is not None)
                if self.aborted is not None:
                    self.state[i] = _DONE
                    return
            try:
                results[i] = body(i)
            except BaseException as exc:   # noqa: BLE001 - re-raised by the launcher
                with self.cond:
                    errors.append((len(errors), i, exc))
            finally:
                with self.cond:
                    self.state[i] = _DONE
                    self.waiting[i] = None
                    self._pass_turn(i)

        threads = []
        for i in range(self.n):
            ctx = contextvars.copy_context()
            t = threading.Thread(target=ctx.run, args=(participant, i),
                                 name=f"fastisa-{self.noun}-{i}", daemon=True)
            threads.append(t)
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
        except BaseException as exc:       # KeyboardInterrupt, a harness's time limit ...
            with self.cond:                # the participants stop at their next wait
                self.aborted = f"the launch was interrupted ({type(exc).__name__})"
                self.cond.notify_all()
            for t in threads:
                t.join(5.0)
            raise
        if errors:
            errors.sort(key=lambda e: e[0])
            raise errors[0][2]
        return results

    def _runnable(self, q) -> bool:
        st = self.state[q]
        if st == _READY:
            return True
        if st == _BLOCKED:
            return bool(self.waiting[q][0]())
        return False

    def _pass_turn(self, me) -> None:
        """(Lock held.)  Give the turn to the next participant that can run; if none can and
        some wait, that is a deadlock: every waiting participant is woken to raise."""
        for k in range(1, self.n + 1):
            q = (me + k) % self.n
            if q != me and self._runnable(q):
                self.turn = q
                self.cond.notify_all()
                return
        if any(s == _BLOCKED for s in self.state) and self.deadlock is None:
            self.deadlock = self._describe()
        self.cond.notify_all()

    def _describe(self) -> str:
        return "deadlock (" + "; ".join(self._states()) + ")"

    def label(self, i: int) -> str:
        """How errors name participant ``i`` ("program 1", "core 0")."""
        return f"{self.noun} {self.names[i]}"

    def _states(self) -> list:
        parts = []
        for i in range(self.n):
            if self.state[i] == _BLOCKED:
                parts.append(f"{self.label(i)} waits in {self.waiting[i][1]}")
            elif self.state[i] == _DONE:
                parts.append(f"{self.label(i)} has ended")
        return parts

    def block(self, me: int, pred, what: str, instr: str) -> None:
        """(Called with ``self.cond`` held.)  Wait until ``pred()``; meanwhile the other
        participants run.  ConstraintError when none can make ``pred`` true."""
        while not pred():
            if self.deadlock is not None:
                raise ConstraintError(f"{instr}: {self.deadlock}")
            self.state[me] = _BLOCKED
            self.waiting[me] = (pred, what)
            self._pass_turn(me)
            self.cond.wait_for(lambda: self.turn == me or self.deadlock is not None
                               or self.aborted is not None)
            self.state[me] = _READY
            self.waiting[me] = None
            if self.aborted is not None:
                raise ConstraintError(f"{instr}: {self.aborted}")
            if self.deadlock is not None and not pred():
                raise ConstraintError(f"{instr}: {self.deadlock}")

    def wake(self, me: int) -> None:
        """(Called with ``self.cond`` held, by the participant holding the turn after it
        changed state others wait on.)  When a waiting participant's wait is now over, the
        turn goes to it at once (in index order) and comes back when it waits or ends: a
        waiter sees each change, as a thread polling the memory would."""
        if not any(self.state[q] == _BLOCKED and q != me and self.waiting[q][0]()
                   for q in range(self.n)):
            return
        self.state[me] = _BLOCKED
        self.waiting[me] = (lambda: True, "a wake-up")
        self._pass_turn(me)
        self.cond.wait_for(lambda: self.turn == me or self.aborted is not None)
        self.state[me] = _READY
        self.waiting[me] = None
