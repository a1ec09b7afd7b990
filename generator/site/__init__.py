"""The auditable static site: rendered from evidence files only.

Stages (one module each): ``discover`` finds run and demo folders and reads their
JSON; ``signatures`` runs the same verification as ``evidence verify``; ``run_page``,
``demo_page``, ``compare_page`` and ``index_page`` turn evidence into page contexts
(every displayed number a :class:`generator.site.numbers.Num` that names its file and
JSON pointer); ``plots`` prepares the plotly figures; ``render`` gathers everything,
then writes the site. Nothing here imports the simulation.
"""

from generator.site.render import build_site

__all__ = ["build_site"]
