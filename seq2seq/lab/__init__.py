"""The lab: what a user does with trained runs (evaluate, compare, probe,
ablate, translate, experiment). Only ``seq2seq.cli`` imports it.
"""
