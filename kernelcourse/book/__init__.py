"""The course's own machinery, apart from the library: the homework release by nbgrader."""
