"""A model's centre: the mean of its embeddings of a fixed set of reference passages.

Sentence encoders such as e5 put every text in a narrow cone: all their vectors share one large
common component, so the sign of most dimensions is the same for every passage and the sign
bits that :mod:`projections.knn` scans carry little. Subtracting the centre before taking signs
makes each bit split the passages about evenly. On the LoCoMo development conversations (every
conversation in one index) the exact ten nearest were found among the first 50 binary
candidates 80 % of the time with the centre subtracted and 41 % without (docs/search.md).

The centre is a property of the model, not of a ledger's contents: it is computed from the
passages below (everyday notes, English and Chinese, like an agent's memories), so a rebuild
and every process agree on it, and its embeddings go through the derived cache like any other.
A centre taken from one ledger's own vectors did a little better (84 %) but would shift as the
ledger grows.
"""

from __future__ import annotations

REFERENCE_PASSAGES = (
    "The deploy to staging failed because the database migration timed out.",
    "Alice prefers dark mode in every editor she uses.",
    "The quarterly budget for the marketing team is 50k dollars.",
    "We decided to move the weekly meeting from Monday to Wednesday afternoon.",
    "The API returns a 429 error when the rate limit is exceeded.",
    "My sister adopted a rescue dog named Biscuit last spring.",
    "The project deadline was pushed back two weeks after the design review.",
    "Use Python 3.11 for the build server; 3.12 breaks the old plugin.",
    "I went hiking in the mountains last weekend and saw a waterfall.",
    "The customer asked for an invoice in euros instead of dollars.",
    "Our office moved to the fifth floor of the new building downtown.",
    "The cache should be cleared after every schema change.",
    "He has been learning to play the guitar for three years.",
    "The contract with the supplier ends on the last day of June.",
    "Tests run nightly on two machines and report to the team channel.",
    "She is allergic to peanuts, so the catering must avoid them.",
    "The logo colours are navy blue and a warm orange.",
    "Remember to back up the production database before the upgrade.",
    "The conference in Berlin starts on the twelfth of September.",
    "They painted a mural of a sunset for the community centre.",
    "服务器在凌晨三点重启了一次，原因是内存不足。",
    "用户希望在下个版本中加入深色模式。",
    "项目的预算已经从五万增加到八万。",
    "我们明天上午十点和客户开会讨论需求。",
    "数据库迁移需要在周末完成，避免影响业务。",
    "她最近在学习摄影，每个周末都去公园拍照。",
    "接口文档已经更新，请大家按照新的字段名调用。",
    "团队决定使用 SQLite 作为本地存储。",
    "他的生日是十月五日，喜欢吃巧克力蛋糕。",
    "这个 bug 只在 Windows 上出现，Linux 上正常。",
    "What did we agree about the release schedule?",
    "The new hire starts on Monday and needs a laptop with 32 GB of memory.",
    "Grandma's recipe uses three eggs and a cup of sugar.",
    "The meeting notes are stored in the shared folder under 2024.",
    "A friend joined a book club and found the first meeting inspiring.",
    "My neighbour ran a half marathon in the rain last Saturday.",
    "The JSON export must keep timestamps in UTC.",
    "We replaced the old router because the Wi-Fi kept dropping.",
    "The report shows a ten percent rise in active users this month.",
    "Turn off notifications after 9 pm on weekdays.",
)


def mean(embeddings: list[bytes], dim: int) -> bytes:
    """The element-wise mean of float32 ``embeddings`` (float32 bytes), summed in float64 in
    passage order so that every process gets the same bytes."""
    import numpy as np

    matrix = np.stack([np.frombuffer(blob, dtype=np.float32, count=dim) for blob in embeddings])
    return matrix.astype(np.float64).mean(axis=0).astype(np.float32).tobytes()
