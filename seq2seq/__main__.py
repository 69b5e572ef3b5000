import sys

from seq2seq.cli import main

status = main()
if "seq2seq.training.distributed" in sys.modules:  # torchrun may have run it
    from seq2seq.training.distributed import end_process

    end_process(status)
sys.exit(status)
