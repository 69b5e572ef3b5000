"""Training: the loop, validation and its scores, schedule, checkpoints,
devices and processes, progress and TensorBoard. Builds on the model and
data layers; knows nothing of the lab above it.
"""
