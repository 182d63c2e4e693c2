"""The quickstart's one ToM-style structured call: a k-level belief and action in the repeated matrix game.

The game is the adaptive-ToM paper's (``adaptive-tom-aaai2026.txt`` §4.1): two players pick A or B at the same
time and both score 5 points when they differ, 0 when they match. A ToM-k player predicts its partner by
imagining a ToM-(k-1) partner (eq. 8) and then picks the reply that best coordinates with it (eq. 9).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tomlib.llm import ChatModel, JsonCompletion, SampleKey

Choice = Literal["A", "B"]


class KLevelReply(BaseModel):
    """A ToM-k agent's answer: its belief about the partner, then its own action."""

    predicted_partner_action: Choice = Field(description="What the partner is expected to choose this round.")
    belief: str = Field(description="One sentence: why the partner will choose that.")
    action: Choice = Field(description="Own choice, coordinating with the prediction.")


_RULES = (
    "You are Player {me} in a repeated two-player game. Each round both players choose A or B at the same time, "
    "without talking. Both get 5 points if the choices differ and 0 if they are the same."
)

_ORDER_HINT = {  # eq. 8-9 spelt out for the A/B game: each order best-responds to the order below it
    0: "Reason at theory-of-mind order 0: treat the partner as part of the environment. Assume it repeats its "
    "previous choice, and choose the option that differs from that.",
    1: "Reason at theory-of-mind order 1: assume the partner reasons at order 0, i.e. it expects you to repeat "
    "your previous choice and so picks the option that differs from yours. Predict that choice, then choose the "
    "option that differs from it.",
    2: "Reason at theory-of-mind order 2: assume the partner reasons at order 1, i.e. it expects you to reason at "
    "order 0 (expecting it to repeat its previous choice, you would pick the other option) and so picks the option "
    "that differs from the one it expects of you. Predict that choice, then choose the option that differs from it.",
}


def k_level_messages(tom_order: int, my_last: Choice, partner_last: Choice, me: int = 1) -> list[dict[str, str]]:
    """Prompt for one decision of a ToM-``tom_order`` player in the A/B game (our wording of eq. 8-9).

    Args:
        tom_order: the player's ToM order k, 0, 1 or 2 (the paper's range).
        my_last: the player's own choice last round, ``A`` or ``B``.
        partner_last: the partner's choice last round.
        me: which player the prompt addresses (1 or 2); only the name in the rules changes.
    """
    if tom_order not in _ORDER_HINT:
        raise ValueError(f"tom_order must be 0, 1 or 2 (the paper's range); got {tom_order}")
    return [
        {"role": "system", "content": _RULES.format(me=me) + " " + _ORDER_HINT[tom_order]},
        {
            "role": "user",
            "content": f"Last round you chose {my_last} and your partner chose {partner_last}. "
            "Predict your partner's choice this round, say why in one sentence, then give your own choice.",
        },
    ]


async def ask_k_level(
    chat: ChatModel,
    *,
    tom_order: int = 1,
    my_last: Choice = "A",
    partner_last: Choice = "A",
    experiment: str = "quickstart",
    episode: int = 0,
    temperature: float = 0.0,
) -> JsonCompletion[KLevelReply]:
    """One structured k-level call, keyed so that a replay finds exactly this call.

    Args:
        chat: the model to ask.
        tom_order: the ToM order k the prompt asks the player to reason at (adaptive-ToM paper, eq. 3 and 8-9).
        my_last: the player's own choice last round.
        partner_last: the partner's choice last round.
        experiment: the experiment named in the call's sample key.
        episode: the episode named in the call's sample key.
        temperature: the sampling temperature (0: the most likely reply).
    """
    key = SampleKey(
        experiment=experiment,
        condition=f"tom{tom_order}",
        episode=episode,
        step=0,
        agent="player1",
        purpose="belief_and_action",
    )
    return await chat.complete_json(
        k_level_messages(tom_order, my_last, partner_last),
        KLevelReply,
        sample_key=key,
        temperature=temperature,
        max_tokens=200,
    )
