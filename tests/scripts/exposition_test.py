#!/usr/bin/env python3
"""Tests of scripts/exposition.py (the scripts' one exposition reader) and of
scripts/exporter-scrapes.py, which reads saved scrapes through it."""
import contextlib
import importlib.util
import io
import pathlib
import sys
import tempfile
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / 'scripts'))
import exposition  # noqa: E402

spec = importlib.util.spec_from_file_location('exporter_scrapes',
                                              REPO / 'scripts' / 'exporter-scrapes.py')
scrapes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scrapes)


def scrape(t):
    """The exporter's counters at time t: idle at 100 W, one process at 300 W."""
    return ('# HELP migscope_gpu_energy_joules_total The board.\n'
            '# TYPE migscope_gpu_energy_joules_total counter\n'
            f'migscope_gpu_energy_joules_total{{gpu="0"}} {400 * t}\n'
            f'migscope_energy_joules_total{{gpu="0",consumer="idle"}} {100 * t}\n'
            f'migscope_energy_joules_total{{gpu="0",consumer="process",pid="7",'
            f'command="train.py"}} {300 * t}\n')


class Exposition(unittest.TestCase):
    def test_labelled_samples_are_read_and_the_rest_skipped(self):
        text = ('# HELP up Whether up.\nup 1\n'
                'migscope_energy_joules_total{gpu="0",consumer="process",pid="7",'
                'command="a \\"b\\""} 12.5\n')
        self.assertEqual(list(exposition.samples(text)),
                         [(exposition.CONSUMER_ENERGY,
                           {'gpu': '0', 'consumer': 'process', 'pid': '7',
                            'command': 'a \\"b\\"'}, 12.5)])

    def test_exporter_scrapes_reads_the_board_and_each_consumer(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = pathlib.Path(tmp)
            for t in range(0, 21):
                (d / f'{1000 + t}.prom').write_text(scrape(t))
            board, consumers = scrapes.read(d / '1010.prom')
            self.assertEqual(board, 4000)
            self.assertEqual(consumers, {'idle': 1000, 'process 7 train.py': 3000})
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                scrapes.main(tmp)
        self.assertIn('21 scrapes', out.getvalue())
        self.assertIn('idle: 25.0 %, process 7 train.py: 75.0 %', out.getvalue())


if __name__ == '__main__':
    unittest.main()
