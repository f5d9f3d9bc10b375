"""The audit's built-in models (``gaugelab audit --model NAME``): real modules that nobody here
wrote, at tiny sizes, with random initialisation and no download. Each is a factory in the form
any user factory takes (``gaugelab.tools.audit``'s docstring): no arguments, returns
``(model, batch)`` or ``(model, batch, loss_fn)``, so ``gaugelab.tools.audit_models:gpt2`` names
the same model as ``gpt2``.
The Hugging Face ones import ``transformers`` (the ``[audit]`` extra) only when called.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn


def _tokens(vocab: int, shape=(4, 8), seed: int = 0) -> Tensor:
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))


def _regression(d: int, batch: int = 4, length: int = 6):
    g = torch.Generator().manual_seed(0)
    x, target = torch.randn(batch, length, d, generator=g), torch.randn(batch, length, d, generator=g)
    return x, lambda out, _: ((out[0] if isinstance(out, tuple) else out) - target.to(x.dtype)).pow(2).mean()


def mha(bias: bool = False):
    """``nn.MultiheadAttention`` (d = 16, 4 heads, fused in_proj_weight), self-attention on a
    fixed random sequence, mean squared error to a fixed random target."""
    torch.manual_seed(0)
    model = nn.MultiheadAttention(16, 4, bias=bias, batch_first=True)
    x, loss = _regression(16)
    return model, (x, x, x), lambda out, _: loss(out, None)


def mha_biased():
    """:func:`mha` with PyTorch's default biases (in_proj_bias, out_proj.bias)."""
    return mha(bias=True)


def encoder():
    """``nn.TransformerEncoderLayer`` (d = 16, 4 heads, MLP 32, bias-free, no dropout)."""
    torch.manual_seed(0)
    model = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, bias=False, batch_first=True)
    x, loss = _regression(16)
    return model, (x,), loss


def gpt2():
    """Hugging Face GPT-2 (fused Conv1D c_attn with biases), 2 layers, d = 16, 4 heads, random
    initialisation, next-token loss on random tokens."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=2, n_head=4, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel._from_config(cfg, attn_implementation="eager")
    ids = _tokens(32)
    return model, {"input_ids": ids, "labels": ids}


def llama():
    """Hugging Face LLaMA (RoPE, grouped-query attention: 4 query heads over 2 key/value heads,
    bias-free), 2 layers, d = 32, random initialisation, next-token loss on random tokens."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16,
                      bos_token_id=0, eos_token_id=0, pad_token_id=0)
    model = LlamaForCausalLM._from_config(cfg, attn_implementation="eager")
    ids = _tokens(32)
    return model, {"input_ids": ids, "labels": ids}


class LoRALinear(nn.Module):
    """y = W x + B A x with a rank-r adapter (B zero at the start, as LoRA initialises it)."""

    def __init__(self, d_in: int, d_out: int, r: int):
        super().__init__()
        self.base = nn.Linear(d_in, d_out, bias=False)
        self.lora_A = nn.Linear(d_in, r, bias=False)
        self.lora_B = nn.Linear(r, d_out, bias=False)
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


def lora():
    """Two LoRA-adapted linear layers (16 → 16 → 8, rank 4, SiLU between) on random regression."""
    torch.manual_seed(0)
    model = nn.Sequential(LoRALinear(16, 16, 4), nn.SiLU(), LoRALinear(16, 8, 4))
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(12, 16, generator=g), torch.randn(12, 8, generator=g)
    return model, (x,), lambda out, _: (out - y.to(out.dtype)).pow(2).mean()


BUILTINS: dict[str, Callable] = {"mha": mha, "mha-biased": mha_biased, "encoder": encoder, "gpt2": gpt2,
                                 "llama": llama, "lora": lora}
