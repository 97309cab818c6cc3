"""What the distributed engines (optboost.dask, optboost.spark) share: the formula's spec built
from partition summaries, the ranks' plan, the code that runs on each rank (its inputs, its
training over the core's collective) and the error of a fit that could not finish. Nothing here
imports an engine."""
