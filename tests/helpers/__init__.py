"""Helpers the tests import (``tests/`` is on the path, so this is the package ``helpers``)."""
