import sys

from seq2seq.cli import main

sys.exit(main())
