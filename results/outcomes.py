"""The words a run records and its reports read, each defined once: what one call of the
implementation did (a reply's status), what a judged case came to (its outcome), what a census
input got (its census status), and the groups they are sorted into. Several words serve in more
than one list (a crash is a reply's status, a case's outcome and a census status alike).

This module imports nothing: a worker process reads its words without loading the rest of the
suite."""

# What one call of the implementation did (engine.asking.worker, engine.asking.isolation).
OK = "ok"  # it returned an answer, kept to be judged
UNSUPPORTED = "unsupported"  # it raised NotImplementedError: not implemented, not a rejection
RAISED = "raised"  # it raised any other exception: a rejection
CRASH = "crash"  # its worker died, held more memory than its limit, or it called sys.exit
TIMEOUT = "timeout"  # it gave no answer within --timeout, and its worker was killed
OVERSIZE = "oversize"  # it returned far more than the output's size: judged on its shape alone, not kept
UNASKED = "unasked"  # it was not made: its batch had spent its budget of crashes and hangs
# What a worker replies; a status's position here is its code on the wire (engine.asking.worker.encode).
REPLY_STATUSES = (OK, UNSUPPORTED, RAISED, CRASH, TIMEOUT, OVERSIZE)
FAULTS = (CRASH, TIMEOUT)  # a call that took its worker down (as a status, an outcome or a census status)

# What a judged case came to (results.records.CaseResult.outcome), besides UNSUPPORTED, CRASH and TIMEOUT.
PASS = "pass"  # every clause the case put to the test holds
FAIL = "fail"  # an answer that breaks a semantic clause
ERROR = "error"  # a valid input rejected (an exception other than NotImplementedError)
MISSING_REJECTION = "missing-rejection"  # an input that must be rejected was computed
OUTCOMES = (PASS, FAIL, UNSUPPORTED, ERROR, MISSING_REJECTION, CRASH, TIMEOUT)
OBSERVED = "observed"  # the outcome of a census case: its behaviour is recorded, never judged
SEVERITY = (CRASH, TIMEOUT, FAIL, MISSING_REJECTION, ERROR, UNSUPPORTED, PASS, OBSERVED)  # every outcome, worst first
# Failed outcomes as a JUnit file tells them apart: an error (the call itself failed) or a failure
# (what came back, an answer or a refusal, is wrong).
ERROR_OUTCOMES = (*FAULTS, ERROR)
FAILURE_OUTCOMES = (FAIL, MISSING_REJECTION, UNSUPPORTED)

# What a census input got (results.records.CensusRecord.status), besides RAISED, UNSUPPORTED,
# CRASH and TIMEOUT.
RETURNED = "returned"  # an answer came back (an oversize one included)
CENSUS_STATUSES = (RETURNED, RAISED, UNSUPPORTED, CRASH, TIMEOUT)
POLICY_STATUSES = (RETURNED, RAISED)  # the census statuses that can show a policy; the others are reported as they are
