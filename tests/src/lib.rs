//! End-to-end tests for March live in `tests/tests/`.
