// The baseline: a Node process that does nothing.
