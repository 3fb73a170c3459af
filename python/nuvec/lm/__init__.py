"""nuvec.lm: language models on nuvec, with mlx-lm's names (docs/lm.md).

from nuvec.lm import generate, load

model, tokenizer = load()  # the embedded SmolLM2-135M-Instruct
messages = [{"role": "user", "content": "Hello"}]
prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
print(generate(model, tokenizer, prompt, max_tokens=32))
"""

from . import sample_utils
from .batch import batch_generate  # the paged one (generate.py's left-padded one is older)
from .convert import convert  # the function, as mlx_lm.convert (the module: sys.modules)
from .generate import (
    BatchResponse,
    GenerationResponse,
    generate,
    generate_step,
    stream_generate,
)
from .models.cache import make_prompt_cache
from .utils import load

__all__ = [
    "BatchResponse",
    "GenerationResponse",
    "batch_generate",
    "convert",
    "generate",
    "generate_step",
    "load",
    "make_prompt_cache",
    "sample_utils",
    "stream_generate",
]
