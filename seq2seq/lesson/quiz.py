"""The knowledge check of notebook 5: questions a student answers in a cell,
and a check that says right or not yet, and why.

The check's worth is its feedback, not secrecy: every option, wrong ones
included, carries the reason it holds or does not, and a wrong answer is
told why it is wrong before the student tries again. The right letters are
in the clear here (a student who reads this file has read the answers and
their reasons, which is studying too); the student's notebook never prints
them first, and the teacher's edition (docs/teacher/) runs every right
answer through the notebook's own checking cells. The right letters are
spread over the options (a test keeps them so), so that guessing one
letter throughout scores no better than chance.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    key: str  # "1", "2", ...: the student's ANSWER_<key>
    text: str
    options: dict[str, str]  # letter -> option
    right: str  # the right option's letter
    feedback: dict[str, str]  # letter -> why it holds or does not


QUESTIONS = [
    Question(
        "1",
        "Attention(Q, K, V) computes, schematically:",
        {
            "a": "softmax(score(Q, K)) V",
            "b": "softmax(V) score(Q, K)",
            "c": "score(Q, V) K",
        },
        "a",
        {
            "a": "the queries are scored against the keys, the softmax turns the "
            "scores into weights, and the weights mix the values",
            "b": "the softmax is taken over scores, not over the values",
            "c": "the keys are what the queries are compared with; the values "
            "are what gets mixed",
        },
    ),
    Question(
        "2",
        "True or false: attention, as usually built, gives every position it "
        "may read some weight (no hard argmax).",
        {"t": "true", "f": "false"},
        "t",
        {
            "t": "the softmax spreads weight over every key: soft attention; "
            "picking one position is hard attention (the lab's `hard` mode)",
            "f": "a softmax never gives a readable key exactly zero; a hard argmax "
            "is hard attention, a special case (the lab's `hard` mode)",
        },
    ),
    Question(
        "3",
        "Soft attention hands back:",
        {
            "a": "one position's index",
            "b": "the keys",
            "c": "a weighted sum of the values",
        },
        "c",
        {
            "a": "an index is what a hard argmax would give; soft attention mixes",
            "b": "the keys are only compared with the query; they are not returned",
            "c": "the weights times the values: a blend of what every position offers",
        },
    ),
    Question(
        "4",
        "The attention pipeline, in order:",
        {
            "a": "project, score, softmax, mix",
            "b": "score, project, mix, softmax",
            "c": "softmax, project, score, mix",
        },
        "a",
        {
            "a": "Q, K and V are projected, Q is scored against K, the softmax "
            "makes weights, the weights mix V",
            "b": "the scores need the projected queries and keys first, and the "
            "mix needs the softmax's weights",
            "c": "a softmax of what? The scores come before it",
        },
    ),
    Question(
        "5",
        "True or false: an encoder's self-attention is usually bidirectional "
        "(a word may read the words after it).",
        {"t": "true", "f": "false"},
        "t",
        {
            "t": "the encoder sees the whole source at once; only a decoder "
            "needs the causal mask",
            "f": "nothing stops an encoder from reading the whole source: the "
            "source exists entirely before decoding starts",
        },
    ),
    Question(
        "6",
        "Cross-attention takes its queries from:",
        {"a": "the encoder", "b": "the decoder", "c": "random noise"},
        "b",
        {
            "a": "the encoder provides the keys and values: what is read",
            "b": "the decoder asks (its states are the queries), the encoder's "
            "states answer (keys and values)",
            "c": "queries are computed from the model's states, never drawn",
        },
    ),
    Question(
        "7",
        "What did attention fix in RNN encoder-decoders?",
        {
            "a": "the decoder could look at every encoder state, not one final vector",
            "b": "training became faster than without it",
            "c": "the encoder no longer needed a recurrence",
        },
        "a",
        {
            "a": "the single vector had to hold the whole source; with attention "
            "the decoder reads the states again at every step (notebook 3)",
            "b": "a step with attention costs more, not less (the demo gives "
            "`none` more steps in the same minutes)",
            "c": "the RNN encoder kept its recurrence; removing it is what the "
            "Transformer did later (notebook 6)",
        },
    ),
    Question(
        "8",
        "True or false: an attention map is a faithful explanation of why the "
        "model wrote a word.",
        {"t": "true", "f": "false"},
        "f",
        {
            "t": "a map shows where weight went, not why; notebook 4 found a "
            "pair translated right whose weights leave the gold alignment",
            "f": "useful, not guaranteed: a map is a hypothesis that ablations "
            "test (notebook 4)",
        },
    ),
    Question(
        "9",
        "Dense attention over n positions costs, in n:",
        {"a": "O(n)", "b": "O(n log n)", "c": "O(n²)"},
        "c",
        {
            "a": "linear is an RNN's cost; attention compares every query with "
            "every key",
            "b": "some approximations reach that; dense attention forms every "
            "query-key weight",
            "c": "one weight per query-key pair: n × n, measured in notebook 6",
        },
    ),
    Question(
        "10",
        "Which part of attention does the next lesson (attention scores) open up?",
        {
            "a": "the softmax",
            "b": "how a query is compared with a key",
            "c": "the values",
        },
        "b",
        {
            "a": "the softmax stays; what feeds it is the subject",
            "b": "the score function: dot, scaled dot, general, additive (the "
            "lab's modes)",
            "c": "the values are mixed as they are; the scores decide how",
        },
    ),
    Question(
        "11",
        "Which attention reads with a causal mask?",
        {
            "a": "the decoder's self-attention",
            "b": "the encoder's self-attention",
            "c": "cross-attention",
        },
        "a",
        {
            "a": "the target prefix: position t reads 1..t, never a word it "
            "has yet to write",
            "b": "the encoder reads the whole source (bidirectional)",
            "c": "the source exists whole before decoding; cross-attention "
            "masks only its padding",
        },
    ),
    Question(
        "12",
        "A decoder trained without its causal mask reaches a lower training "
        "loss. Its translations are:",
        {
            "a": "better, since the loss is lower",
            "b": "about the same",
            "c": "broken: it learned to read the word it predicts",
        },
        "c",
        {
            "a": "the loss is lower because the answer is in its input; search "
            "never has that input",
            "b": "search cannot give it the future it learned to read",
            "c": "under teacher forcing position t+1 holds the word to predict "
            "at t; notebook 6 trains one and it reverses nothing",
        },
    ),
    Question(
        "13",
        "Take the residual connections out of a deep Transformer. What happens "
        "in training?",
        {
            "a": "it trains as well, only slower",
            "b": "the gradient reaching the lower layers fades, and it barely learns",
            "c": "it trains better: fewer additions",
        },
        "b",
        {
            "a": "slower would be the mild case; notebook 6 measures no learning",
            "b": "with no identity path the signal from the loss fades on its "
            "way down (notebook 6, section 6)",
            "c": "the additions are what let the gradient through",
        },
    ),
    Question(
        "14",
        "True or false: attention is a tool for aligning words in translation only.",
        {"t": "true", "f": "false"},
        "f",
        {
            "t": "notebook 6 trains attention pooling over a picture's patches: "
            "no words at all",
            "f": "it is a general layer that chooses what to read from a set: "
            "patches, words, frames",
        },
    ),
]

BY_KEY = {q.key: q for q in QUESTIONS}


def ask(key: str) -> None:
    """Print question ``key`` with its options."""
    q = BY_KEY[key]
    print(f"{q.key}. {q.text}")
    for letter, option in q.options.items():
        print(f"   ({letter}) {option}")


def verdict(key: str, answer: str | None) -> str:
    """One line: no answer yet, right (why), or not yet (why not)."""
    q = BY_KEY[key]
    if answer is None:
        return f"{key}: no answer yet: set ANSWER_{key} to a letter and run again"
    letter = str(answer).strip().lower().strip("()")
    if letter not in q.options:
        return f"{key}: not yet: answer with one of {', '.join(q.options)}"
    if letter == q.right:
        return f"{key}: right: {q.feedback[letter]}"
    return f"{key}: not yet: ({letter}) {q.feedback[letter]}"


def check(key: str, answer: str | None) -> None:
    print(verdict(key, answer))
