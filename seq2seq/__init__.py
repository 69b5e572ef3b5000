"""seq2seq: what does attention buy an RNN encoder-decoder?

The package's floor plan is docs/architecture.md. Importing it registers
every attention mode (model/attention.py fills the registry in modes.py), so
the registry is complete before any config is read.
"""

from seq2seq.model import attention as _attention  # noqa: F401 (registers modes)

__version__ = "0.1.0"
