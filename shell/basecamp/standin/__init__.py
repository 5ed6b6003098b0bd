"""A local Basecamp stand-in, for the demo and the tests."""
