"""Physical validation: the object suite (protocol 004) and robot-model self-consistency.

Every check reports PASS / FAIL / UNVERIFIED / NOT_APPLICABLE; a check that did not run is
never PASS. See ``suite.run_object_suite`` for assets and ``robot`` for the arm model.
"""
