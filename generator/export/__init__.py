"""Exports of a prepared cell: MJCF (scene.xml + tool.stl), OpenUSD (scene.usda), glTF (robot.glb).

Each module has one entry function that writes its file(s) into a cell folder and returns a
JSON-ready record for robot.json ``exports``; see docs/CONTRACTS.md and DESIGN.md section 3.
"""
