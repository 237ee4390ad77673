"""The readout layer: a model's probabilities or text back into the answers the prompts asked for.

Once, for every part: choice probabilities over options (token variants
merged, renormalised, averaged over orderings sent as prefix groups:
:func:`read_choices`, or :func:`read_rendered` for the prompt layer's questions; each item's own options, raw: :func:`score_options`;
a likelihood bin's value: :func:`most_likely`), digit readouts
(:func:`read_digit`, :func:`read_two_digits`) and generation parsing
(:func:`parse_probability`, :func:`strip_thinking`; the option a text
states: :func:`parse_choice`; the ranking it states, or none: :func:`parse_ranking`). Parts build their
prompts with :mod:`folkscope.prompting`, hand them here, and turn what
comes back into metrics.
"""

from folkscope.readout.choices import (
    ChoiceReadout,
    OptionScores,
    most_likely,
    read_choices,
    read_rendered,
    score_options,
)
from folkscope.readout.digits import DIGIT_READOUTS, DIGITS, TwoDigitReadout, read_digit, read_two_digits
from folkscope.readout.generation import parse_probability, strip_thinking
from folkscope.readout.rankings import Ranking, parse_ranking
from folkscope.readout.statements import parse_choice

__all__ = [
    "DIGITS",
    "DIGIT_READOUTS",
    "ChoiceReadout",
    "OptionScores",
    "Ranking",
    "TwoDigitReadout",
    "most_likely",
    "parse_choice",
    "parse_probability",
    "parse_ranking",
    "read_choices",
    "read_digit",
    "read_rendered",
    "read_two_digits",
    "score_options",
    "strip_thinking",
]
