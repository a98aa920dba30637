"""The Jinja templates of generated modules, shipped as the package `dynyan.templates`."""
