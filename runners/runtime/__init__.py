"""The runtime: the component registry, the task runner, prediction readers, tables, templates and the
shared types every benchmark and the metric library use (docs/architecture.md, "runners")."""
