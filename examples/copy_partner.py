from tomlib.agents import Agent, Decision


class CopyPartner(Agent):
    """Plays what the partner played last step, if it may; else a legal move from its own stream."""

    name = "Copycat"
    immediate = True  # act never waits on a model: two such agents run in turn, without tasks

    def __init__(self, fallback: str = "stay") -> None:
        self.fallback = fallback

    async def act(self, state: object) -> Decision:
        legal = self.game.legal_actions(state, self.player)
        last = self.history[-1][1 - self.player] if self.history else None
        if last in legal:
            return Decision(last, {"copied": last})
        if self.fallback in legal:
            return Decision(self.fallback, {"copied": None})
        return Decision(self.rng.choice(legal), {"copied": None})
