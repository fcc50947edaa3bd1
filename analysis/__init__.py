"""Pure numeric code for the arena: ratings, intervals, sampling, clean-up and labelling.

Nothing in this package imports Django; every module takes plain values (arrays,
dataclasses, strings) and returns plain values, so it can be tested and benchmarked alone.
"""
