"""The kinds of error the harness raises, the one home of its exception classes' meaning.

Every exception class the harness, its scenarios and its fault injectors define derives from one of the kinds
below (``tests/unit/test_errors.py`` checks it), besides the builtin base it had (``ValueError``,
``RuntimeError``), so ``except ValueError`` where it worked before still works. A caller tells them apart by
kind without knowing each module: a command line, a CI wrapper, a user's test. Three classes have two kinds,
as members of a family that has one: the engine's ``HarnessError`` is a harness failure, and of its children
``RunRefused`` (the driver refused the pipeline as bad input) is a usage error too and ``QueryFailedError``
(the query refused to go on) is observed too; the Kafka client's ``BrokerUnreachable`` is a set-up error.

- :class:`UsageError`: the input is wrong (a file, an option, a reference, a fault plan, a pipeline Spark
  refuses to run as written). The message names it and says what to change. Commands print it in one line
  and exit 2.
- :class:`SetupError`: the machine lacks what the run needs (a jar set, a server, a release a registry does
  not serve). The message says how to get it. Commands print it in one line and exit 2.
- :class:`HarnessFailure`: the harness could not reach a verdict (a driver that did not start, a checkpoint or
  log it cannot read, a fault it could not inject). Not the pipeline's fault: a run ends as "no verdict".
- :class:`Observed`: what the subject under test did, or a fault the harness injected: a query that died, a
  check a connector failed or that does not apply to it. Evidence carried to a verdict, never an error of the
  harness.

This module imports nothing: any module may import it, an older PySpark's round included.
"""

from __future__ import annotations


class HarnessException(Exception):
    """Base of every exception class the harness defines (through exactly the kinds below)."""


class UsageError(HarnessException):
    """The input is wrong; the message names it and says what to change (commands exit 2, one line)."""


class SetupError(HarnessException):
    """Something the run needs is missing here; the message says how to get it (commands exit 2, one line)."""


class HarnessFailure(HarnessException):
    """The harness could not reach a verdict; the message says what failed and where its log is."""


class Observed(HarnessException):
    """What the subject under test did, or a fault the harness injected: evidence for a verdict."""


#: The kinds, in the order the module's docstring gives them.
KINDS: tuple[type[HarnessException], ...] = (UsageError, SetupError, HarnessFailure, Observed)
