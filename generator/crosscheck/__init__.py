"""Cross-engine checks of the exported cell (DESIGN.md section 3).

``newton``: the USD export imported by Newton against the MJCF export in MuJoCo (articulation,
joints, masses, forward kinematics). ``dynamics``: MuJoCo against Pinocchio (gravity torques,
joint-space mass matrix) from the same exported MJCF.
"""
