"""The component library besides the metrics (runners.metrics): normalisers, text pipelines, similarities,
matchers, filters, record rules and generic readers that specs call by name (docs/architecture.md, "runners")."""
