"""Calibrate the semantic notice thresholds on labelled pairs, English and Chinese, as JSON.

Each pair is labelled with what a person would want proposed:

* ``duplicate``: the same fact in other words (a near-duplicate notice);
* ``disagreement``: the same subject with a different value, date, negation or name (a
  disagreement notice);
* ``none``: two different facts of the same domain (nothing to propose).

Every pair is embedded as memories are (:func:`projections.vectors.passage_text`), its cosine
taken, and :func:`projections.notices.pair_kind` run at every (similarity, duplicate) threshold
on a 0.005 grid. The JSON gives the cosines by label and the thresholds that label the most pairs
right (the middle of the best range, so neither edge decides).

    python -m tools.eval.notice_pairs [--model NAME|PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from statistics import median
from typing import Any

import numpy as np

from fact_ledger.ledger.disagree import DISAGREEMENTS
from fact_ledger.projections import notices, vectors
from fact_ledger.projections.runtime.embedding import load_embedder
from fact_ledger.server.config import load_settings

# (label, left, right)
PAIRS: list[tuple[str, str, str]] = [
    # -- English: the same fact, reworded
    ("duplicate", "The staging API listens on port 8080.", "Port 8080 is where the staging API listens."),
    ("duplicate", "Alice prefers tea over coffee in the morning.", "Mornings, Alice would rather drink tea."),
    ("duplicate", "The deploy freeze starts on 2024-12-20.", "Starting 2024-12-20 deploys are frozen."),
    ("duplicate", "Backups run every night at 2 am.", "Every night at 2 am the backups run."),
    ("duplicate", "The project budget is 50k dollars.", "The budget for the project is 50k dollars."),
    ("duplicate", "Bob leads the payments team.", "The payments team is led by Bob."),
    ("duplicate", "Our office moved to Berlin last year.", "Last year our office relocated to Berlin."),
    ("duplicate", "Use Python 3.11 for the build scripts.", "The build scripts should use Python 3.11."),
    ("duplicate", "The customer wants the report in PDF format.", "The client would like the report as a PDF."),
    ("duplicate", "Caroline went to the support group yesterday.", "Yesterday Caroline attended the support group."),
    # -- English: same subject, something differs
    ("disagreement", "The project budget is 50k dollars.", "The project budget is 80k dollars."),
    ("disagreement", "The staging API listens on port 8080.", "The staging API listens on port 9090."),
    ("disagreement", "The deploy freeze starts on 2024-12-20.", "The deploy freeze starts on 2025-01-06."),
    ("disagreement", "Backups run every night at 2 am.", "Backups run every night at 4 am."),
    ("disagreement", "Alice approved the migration plan.", "Alice did not approve the migration plan."),
    ("disagreement", "The release is blocked by security review.", "The release is not blocked by security review."),
    ("disagreement", "Bob leads the payments team.", "Carol leads the payments team."),
    ("disagreement", "The team has 12 engineers.", "The team has 9 engineers."),
    ("disagreement", "The meeting with Acme is on Monday 3 March.", "The meeting with Acme is on Monday 10 March."),
    ("disagreement", "Our office is in Berlin.", "Our office is in Munich."),
    # -- English: different facts
    ("none", "The staging API listens on port 8080.", "The production database runs PostgreSQL 16."),
    ("none", "Alice prefers tea over coffee in the morning.", "Bob goes running every evening."),
    ("none", "The project budget is 50k dollars.", "The marketing campaign launches in spring."),
    ("none", "Backups run every night at 2 am.", "The VPN certificate expires next month."),
    ("none", "Bob leads the payments team.", "The payments service is written in Go."),
    ("none", "The deploy freeze starts on 2024-12-20.", "Code reviews need two approvals."),
    ("none", "Caroline went to the support group yesterday.", "Melanie painted a sunset over the lake."),
    ("none", "Use Python 3.11 for the build scripts.", "The docs site is built with MkDocs."),
    ("none", "The customer wants the report in PDF format.", "The invoice is due at the end of the month."),
    ("none", "Our office moved to Berlin last year.", "The coffee machine on the second floor is broken."),
    # -- Chinese: the same fact, reworded
    ("duplicate", "测试环境的接口监听 8080 端口。", "8080 端口是测试环境接口监听的端口。"),
    ("duplicate", "项目预算是五万元。", "这个项目的预算为五万元。"),
    ("duplicate", "每天晚上两点运行备份。", "备份在每天夜里两点执行。"),
    ("duplicate", "王经理负责支付团队。", "支付团队由王经理负责。"),
    ("duplicate", "客户希望报告使用 PDF 格式。", "客户想要 PDF 格式的报告。"),
    ("duplicate", "我们的办公室去年搬到了上海。", "去年我们的办公室迁到了上海。"),
    ("duplicate", "发布冻结从 2024 年 12 月 20 日开始。", "从 2024 年 12 月 20 日起冻结发布。"),
    ("duplicate", "小李早上更喜欢喝茶。", "早上小李比较喜欢喝茶。"),
    # -- Chinese: same subject, something differs
    ("disagreement", "项目预算是五万元。", "项目预算是八万元。"),
    ("disagreement", "测试环境的接口监听 8080 端口。", "测试环境的接口监听 9090 端口。"),
    ("disagreement", "每天晚上两点运行备份。", "每天晚上四点运行备份。"),
    ("disagreement", "王经理批准了迁移方案。", "王经理没有批准迁移方案。"),
    ("disagreement", "发布冻结从 2024 年 12 月 20 日开始。", "发布冻结从 2025 年 1 月 6 日开始。"),
    ("disagreement", "团队有 12 名工程师。", "团队有 9 名工程师。"),
    ("disagreement", "这次发布被安全审查阻塞了。", "这次发布没有被安全审查阻塞。"),
    ("disagreement", "会议定在 3 月 3 日。", "会议定在 3 月 10 日。"),
    # -- Chinese: different facts
    ("none", "测试环境的接口监听 8080 端口。", "生产数据库使用 PostgreSQL 16。"),
    ("none", "项目预算是五万元。", "市场活动在春天启动。"),
    ("none", "每天晚上两点运行备份。", "VPN 证书下个月到期。"),
    ("none", "王经理负责支付团队。", "支付服务是用 Go 写的。"),
    ("none", "客户希望报告使用 PDF 格式。", "发票在月底到期。"),
    ("none", "我们的办公室去年搬到了上海。", "二楼的咖啡机坏了。"),
    ("none", "发布冻结从 2024 年 12 月 20 日开始。", "代码评审需要两个人批准。"),
    ("none", "小李早上更喜欢喝茶。", "老张每天晚上跑步。"),
]
GRID = [round(0.70 + 0.005 * i, 3) for i in range(60)]  # 0.700 .. 0.995


def expected(label: str, kind: str | None) -> bool:
    if label == "none":
        return kind is None
    if label == "duplicate":
        return kind == "duplicate"
    return kind in DISAGREEMENTS


def calibrate(similarities: list[float]) -> dict[str, Any]:
    """Pairs labelled right at every threshold pair; the middle of the best ones."""
    scores: dict[tuple[float, float], int] = {}
    for low in GRID:
        for high in GRID:
            if high < low:
                continue
            t = notices.Thresholds(similarity=low, duplicate_similarity=high)
            scores[(low, high)] = sum(
                expected(label, (notices.pair_kind(left, right, s, t) or {}).get("kind"))
                for (label, left, right), s in zip(PAIRS, similarities, strict=True)
            )
    best = max(scores.values())
    winners = [k for k, v in scores.items() if v == best]
    lows = sorted({k[0] for k in winners})
    low = lows[len(lows) // 2]
    highs = sorted(k[1] for k in winners if k[0] == low)
    high = highs[len(highs) // 2]
    current = scores.get((notices.SIMILARITY, notices.DUPLICATE_SIMILARITY))
    return {
        "best_correct": best,
        "pairs": len(PAIRS),
        "similarity": low,
        "duplicate_similarity": high,
        "similarity_range": [lows[0], lows[-1]],
        "duplicate_range_at_similarity": [highs[0], highs[-1]],
        "correct_at_current": current,
        "current": [notices.SIMILARITY, notices.DUPLICATE_SIMILARITY],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="embedding model name or GGUF path (default: the configured one)")
    args = parser.parse_args(argv)
    path = args.model or load_settings().embedding_model_path
    if not path:
        raise SystemExit("no embedding model: pass --model or run ledger model install")
    model = load_embedder(path)
    similarities = []
    for _label, left, right in PAIRS:
        a, b = (
            np.frombuffer(v, dtype="<f4")
            for v in model.embed_passages([vectors.passage_text(left), vectors.passage_text(right)])
        )
        similarities.append(round(float(a @ b), 4))
    by_label: dict[str, Any] = {}
    for label in ("duplicate", "disagreement", "none"):
        values = sorted(s for (lab, _, _), s in zip(PAIRS, similarities, strict=True) if lab == label)
        by_label[label] = {"n": len(values), "min": values[0], "median": round(median(values), 4), "max": values[-1]}
    json.dump(
        {
            "task": "notice thresholds",
            "model": model.model_id,
            "cosines": by_label,
            "chosen": calibrate(similarities),
            "pairs": [
                {"label": lab, "left": le, "right": ri, "cosine": s}
                for (lab, le, ri), s in zip(PAIRS, similarities, strict=True)
            ],
        },
        sys.stdout,
        indent=2,
        ensure_ascii=False,
    )
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
