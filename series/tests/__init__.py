"""Unit tests of the series package (tools/series); see base.py."""
