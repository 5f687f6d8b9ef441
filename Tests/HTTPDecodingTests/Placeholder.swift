// Tests for this target arrive with its issue.
