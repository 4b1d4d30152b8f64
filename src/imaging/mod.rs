//! Post-stack depth migration: the plan, the methods and the CPU engine.
