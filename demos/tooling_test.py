#!/usr/bin/python3
"""Tests of the demo and benchmark tooling that run without the softwire engine.

Run by CTest (demos/CMakeLists.txt) as `tooling_test.py --protoc PATH`; also by hand:
    /usr/bin/python3 demos/tooling_test.py --protoc "$(command -v protoc)"
Checks that every job file parses as a softwire.proto.Job and uses only ops of docs/OPS.md,
that charlm.pbtxt is what make_job.py generates, that the NumPy port of base/random.h
matches C++, that the metrics reader accepts the layouts it documents, that the evaluation
scripts compute what they claim on weights whose answer is known, and that every script in
scripts/ parses.
"""

import glob
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "common"))
sys.path.insert(0, os.path.join(HERE, "charlm"))

import softwire_metrics  # noqa: E402
import softwire_random  # noqa: E402

PROTOC = "protoc"
JOB_FILES = sorted(glob.glob(os.path.join(HERE, "*", "*.pbtxt")) +
                   glob.glob(os.path.join(ROOT, "bench", "*", "*.pbtxt")))


def load_script(relative_path, module_name):
    """Imports a script by path; both demos have an evaluate.py, so names must differ."""
    spec = importlib.util.spec_from_file_location(module_name, os.path.join(HERE, relative_path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documented_ops():
    """Op names of docs/OPS.md's headings, e.g. "### reduce_sum (x) -> y, reduce_mean (x) -> y"."""
    names = set()
    with open(os.path.join(ROOT, "docs", "OPS.md")) as ops:
        for heading in re.findall(r"^### (.*)$", ops.read(), re.MULTILINE):
            names.update(re.findall(r"(\w+) \(", heading))
    return names


class JobFileTest(unittest.TestCase):
    def test_there_are_job_files_to_check(self):
        names = {os.path.basename(path) for path in JOB_FILES}
        self.assertTrue({"charlm.pbtxt", "digits.pbtxt", "fashion.pbtxt", "mlp.pbtxt"} <= names,
                        names)

    def test_every_job_file_parses_as_a_job(self):
        for path in JOB_FILES:
            with self.subTest(path=path), open(path, "rb") as job:
                result = subprocess.run(
                    [PROTOC, f"--proto_path={ROOT}", "--encode=softwire.proto.Job",
                     "proto/job.proto"], stdin=job, capture_output=True, cwd=ROOT)
                self.assertEqual(result.returncode, 0, result.stderr.decode())
                self.assertGreater(len(result.stdout), 100)

    def test_every_job_file_uses_only_documented_ops(self):
        known = documented_ops()
        self.assertIn("batch_matmul", known)
        for path in JOB_FILES:
            with self.subTest(path=path), open(path) as job:
                used = set(re.findall(r'type: "(\w+)"', job.read()))
                self.assertTrue(used, "no ops found")
                self.assertEqual(used - known, set())

    def test_charlm_jobs_are_what_make_job_generates(self):
        import make_job
        for name, micro_batches in (("charlm.pbtxt", 1), ("charlm_pipelined.pbtxt", 4)):
            with self.subTest(job=name):
                with open(os.path.join(HERE, "charlm", name)) as job:
                    checked_in = job.read()
                config = json.loads(re.match(r"# charlm: (\{.*\})\n", checked_in).group(1))
                self.assertEqual(config.get("micro_batches", 1), micro_batches)
                self.assertEqual(make_job.make_job(config), checked_in,
                                 f"{name} is stale: run demos/charlm/make_job.py")

    def test_fashion_job_is_what_make_job_generates(self):
        fashion_make_job = load_script("fashion/make_job.py", "fashion_make_job")
        with open(os.path.join(HERE, "fashion", "fashion.pbtxt")) as job:
            checked_in = job.read()
        config = json.loads(re.match(r"# fashion: (\{.*\})\n", checked_in).group(1))
        self.assertEqual(fashion_make_job.make_job(config), checked_in,
                         "fashion.pbtxt is stale: run demos/fashion/make_job.py")
        with open(os.path.join(HERE, "fashion", "fashion_decayed.pbtxt")) as job:
            decayed = job.read()
        self.assertEqual(fashion_make_job.make_job(config, decayed=True), decayed,
                         "fashion_decayed.pbtxt is stale: run demos/fashion/make_job.py")
        # The two jobs differ in their learning rate (and a comment) only.
        differing = [(a, b) for a, b in zip(checked_in.splitlines(), decayed.splitlines())
                     if a != b]
        self.assertEqual(len(differing), 2, differing)
        self.assertIn(f"learning_rate: {config['decayed_learning_rate']!r}", differing[1][1])

    def test_resnet20_job_is_what_make_resnet20_generates(self):
        script = os.path.join(ROOT, "bench", "conv", "make_resnet20.py")
        with open(os.path.join(ROOT, "bench", "conv", "resnet20.pbtxt")) as job:
            checked_in = job.read()
        flags = re.match(r"# ResNet-20, batch \d+: generated by \S+ (.*)\n", checked_in).group(1)
        generated = subprocess.run([sys.executable, script] + flags.split(), check=True,
                                   capture_output=True, text=True).stdout
        self.assertEqual(generated, checked_in,
                         "resnet20.pbtxt is stale: run bench/conv/make_resnet20.py")


class RandomPortTest(unittest.TestCase):
    def test_port_reproduces_the_cpp_values(self):
        softwire_random.self_test()

    def test_uniform_ints_stay_in_range_and_cover_it(self):
        values = softwire_random.uniform_int_at(3, np.arange(10000), 7)
        self.assertEqual(set(values.tolist()), set(range(7)))


class NpyPermutationPortTest(unittest.TestCase):
    def test_epoch_permutation_is_a_permutation_that_changes_with_seed_and_epoch(self):
        first = softwire_random.epoch_permutation(3, 0, 1000)
        self.assertEqual(sorted(first.tolist()), list(range(1000)))
        self.assertFalse(np.array_equal(first, softwire_random.epoch_permutation(3, 1, 1000)))
        self.assertFalse(np.array_equal(first, softwire_random.epoch_permutation(4, 0, 1000)))

    def test_npy_samples_follow_the_epochs(self):
        positions = np.arange(25)
        self.assertEqual(softwire_random.npy_samples(1, False, 10, positions).tolist(),
                         (positions % 10).tolist())
        shuffled = softwire_random.npy_samples(1, True, 10, positions)
        for epoch in range(3):
            np.testing.assert_array_equal(
                shuffled[epoch * 10:(epoch + 1) * 10],
                softwire_random.epoch_permutation(1, epoch, 10)[:len(shuffled[epoch * 10:
                                                                              (epoch + 1) * 10])])


class MetricsReaderTest(unittest.TestCase):
    STEPS = [{"step": 1, "loss": 5.5}, {"step": 2, "loss": 4.0, "accuracy": 0.2}]

    def read(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as stream:
            stream.write(text)
        try:
            return softwire_metrics.read_losses(stream.name)
        finally:
            os.unlink(stream.name)

    def test_json_lines_array_and_object_layouts_read_alike(self):
        expected = [(1, 5.5), (2, 4.0)]
        self.assertEqual(self.read("\n".join(json.dumps(s) for s in self.STEPS) + "\n"),
                         expected)
        self.assertEqual(self.read(json.dumps(self.STEPS)), expected)
        self.assertEqual(self.read(json.dumps({"job": "x", "steps": self.STEPS})), expected)

    def test_records_without_loss_are_skipped_and_steps_numbered_in_order(self):
        text = '{"loss": 3.0}\n{"loss": 2.0}\n{"summary": true}\n'
        self.assertEqual(self.read(text), [(0, 3.0), (1, 2.0)])

    def test_the_cli_layout_reads_with_null_as_nan(self):
        text = ('{"step":0,"loss":2.30,"samples_per_second":1234.5,"seconds":0.01,'
                '"accuracy":0.12}\n{"step":1,"loss":null,"samples_per_second":1.0,'
                '"seconds":0.01,"output:seconds":3}\n')
        (step0, loss0), (step1, loss1) = self.read(text)
        self.assertEqual((step0, loss0, step1), (0, 2.30, 1))
        self.assertTrue(math.isnan(loss1))

    def test_a_file_without_losses_is_an_error(self):
        with self.assertRaises(ValueError):
            self.read('{"accuracy": 1}\n')

    def test_training_end_is_the_mean_of_the_last_tenth(self):
        losses = [(i, float(i)) for i in range(1, 101)]
        self.assertEqual(softwire_metrics.first_and_last(losses), (1.0, 95.5, 10))


class CharlmEvaluationTest(unittest.TestCase):
    """A small config written by make_job.py into a temporary directory with a corpus."""

    @classmethod
    def setUpClass(cls):
        import make_job
        import model
        cls.model = model
        cls.directory = tempfile.TemporaryDirectory()
        os.makedirs(os.path.join(cls.directory.name, "data"))
        rng = np.random.default_rng(0)
        with open(os.path.join(cls.directory.name, "data", "licenses.txt"), "wb") as corpus:
            corpus.write(bytes(rng.integers(32, 127, size=4000).tolist()))
        cls.config = {"embed": 16, "context": 8, "heads": 2, "layers": 2, "batch": 4,
                      "steps": 10, "learning_rate": 0.01, "train_fraction": 0.9,
                      "data_seed": 1}
        cls.job = os.path.join(cls.directory.name, "charlm.pbtxt")
        with open(cls.job, "w") as job:
            job.write(make_job.make_job(cls.config))

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def test_initial_variables_follow_the_job_initializers(self):
        weights = self.model.initial_variables(self.job, self.model.read_job_config(self.job))
        self.assertEqual(set(weights), set(self.model.variable_shapes(self.config)))
        self.assertEqual(weights["wte"].shape, (256, 16))
        np.testing.assert_array_equal(weights["block0_ln1_gamma"], np.ones(16))
        self.assertAlmostEqual(float(weights["wte"].std()), 0.02, delta=0.002)
        self.assertEqual(float(weights["wte"][0, 0]),
                         float(np.float32(0.02 * softwire_random.normal_at(1, [0])[0])))

    def test_untrained_model_scores_about_the_uniform_loss(self):
        evaluate = load_script("charlm/evaluate.py", "charlm_evaluate")
        config = self.model.read_job_config(self.job)
        weights = self.model.initial_variables(self.job, config)
        loss, positions = evaluate.validation_loss(weights, config)
        self.assertEqual(positions, (400 - 1) // 8 * 8)
        self.assertAlmostEqual(loss, math.log(256), delta=0.02)

    def test_attention_is_causal(self):
        config = self.model.read_job_config(self.job)
        weights = self.model.initial_variables(self.job, config)
        rng = np.random.default_rng(1)
        weights = {k: v + rng.normal(0, 0.3, v.shape) for k, v in weights.items()}
        ids = rng.integers(0, 256, size=(2, 8))
        changed = ids.copy()
        changed[:, 5:] = (changed[:, 5:] + 1) % 256
        before = self.model.logits(ids, weights, config)
        after = self.model.logits(changed, weights, config)
        np.testing.assert_allclose(before[:, :5], after[:, :5], rtol=0, atol=1e-12)
        self.assertGreater(np.abs(before[:, 5:] - after[:, 5:]).max(), 1e-3)

    def test_a_model_that_knows_the_answer_scores_near_zero(self):
        # Zero every block's output, and read the current byte through the embedding: with
        # constant text "ab" repeated, the next byte is a function of the current one.
        config = self.model.read_job_config(self.job)
        weights = {k: np.zeros(v) for k, v in self.model.variable_shapes(config).items()}
        for name in weights:
            if name.endswith("gamma"):
                weights[name][:] = 1.0
        for byte, column in ((ord("a"), 0), (ord("b"), 1)):
            weights["wte"][byte, column] = 1.0
        weights["w_lm"][0, ord("b")] = 40.0  # After 'a' comes 'b'.
        weights["w_lm"][1, ord("a")] = 40.0
        ids = np.array([[ord(c) for c in "abababab"]])
        targets = np.array([[ord(c) for c in "babababa"]])
        loss = self.model.cross_entropy(self.model.logits(ids, weights, config), targets)
        self.assertLess(float(loss.max()), 1e-3)

    def test_evaluate_script_reports_the_summary_line(self):
        with tempfile.TemporaryDirectory() as out:
            weights = self.model.initial_variables(self.job, self.model.read_job_config(self.job))
            for name, value in weights.items():
                np.save(os.path.join(out, name + ".npy"), value.astype(np.float32))
            metrics = os.path.join(out, "metrics.json")
            with open(metrics, "w") as stream:
                for step, loss in enumerate([5.5, 4.0, 3.0], 1):
                    stream.write(json.dumps({"step": step, "loss": loss}) + "\n")
            result = subprocess.run(
                [sys.executable, os.path.join(HERE, "charlm", "evaluate.py"), "--job", self.job,
                 "--variables", out, "--metrics", metrics, "--sample-length", "5"],
                capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertRegex(result.stdout, r"training loss 5\.50 -> 3\.00 over 3 steps; "
                                            r"validation loss 5\.5\d \(uniform guess 5\.55\)")


class DigitsEvaluationTest(unittest.TestCase):
    def test_accuracy_and_loss_of_a_classifier_that_reads_the_label_pixel(self):
        digits_evaluate = load_script("digits/evaluate.py", "digits_evaluate")
        labels = np.arange(40) % 10
        x = np.zeros((40, 64))
        x[np.arange(40), labels] = 1.0  # Pixel `label` is lit.
        weights = {"w1": np.zeros((64, 128)), "b1": np.zeros(128), "w2": np.zeros((128, 10)),
                   "b2": np.zeros(10)}
        weights["w1"][np.arange(10), np.arange(10)] = 1.0
        weights["w2"][np.arange(10), np.arange(10)] = 30.0
        accuracy, loss = digits_evaluate.evaluate(weights, x, labels)
        self.assertEqual(accuracy, 1.0)
        self.assertLess(loss, 1e-6)
        accuracy, _ = digits_evaluate.evaluate(weights, x, (labels + 1) % 10)
        self.assertEqual(accuracy, 0.0)


def write_idx(path, array):
    """An idx file of unsigned bytes (gzip-compressed for a .gz name)."""
    header = (0x0800 + array.ndim).to_bytes(4, "big") + b"".join(
        int(extent).to_bytes(4, "big") for extent in array.shape)
    opener = __import__("gzip").open if path.endswith(".gz") else open
    with opener(path, "wb") as stream:
        stream.write(header + array.astype(np.uint8).tobytes())


class FashionTest(unittest.TestCase):
    """prepare.py on small idx files made here; the NumPy network against known answers."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(HERE, "fashion"))
        cls.prepare = load_script("fashion/prepare.py", "fashion_prepare")
        cls.model = load_script("fashion/model.py", "fashion_model")
        cls.evaluate = load_script("fashion/evaluate.py", "fashion_evaluate")

    def make_source(self, directory, train=6, test=4, compress=True):
        rng = np.random.default_rng(5)
        suffix = ".gz" if compress else ""
        arrays = {"train-images-idx3-ubyte": rng.integers(0, 256, (train, 28, 28)),
                  "train-labels-idx1-ubyte": np.arange(train) % 10,
                  "t10k-images-idx3-ubyte": rng.integers(0, 256, (test, 28, 28)),
                  "t10k-labels-idx1-ubyte": (np.arange(test) + 3) % 10}
        for name, array in arrays.items():
            write_idx(os.path.join(directory, name + suffix), array)
        return arrays

    def test_read_idx_returns_the_header_shape_and_the_bytes(self):
        with tempfile.TemporaryDirectory() as directory:
            for compress in (True, False):
                arrays = self.make_source(directory, compress=compress)
                suffix = ".gz" if compress else ""
                images = self.prepare.read_idx(
                    os.path.join(directory, "train-images-idx3-ubyte" + suffix))
                np.testing.assert_array_equal(images, arrays["train-images-idx3-ubyte"])
                labels = self.prepare.read_idx(
                    os.path.join(directory, "t10k-labels-idx1-ubyte" + suffix))
                self.assertEqual(labels.tolist(), [3, 4, 5, 6])

    def test_read_idx_rejects_a_wrong_type_or_length(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "bad")
            with open(path, "wb") as stream:  # Element type 0x0D (float), not bytes.
                stream.write(bytes([0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0]))
            with self.assertRaisesRegex(ValueError, "not an idx file of unsigned bytes"):
                self.prepare.read_idx(path)
            write_idx(path, np.zeros((3, 2)))
            with open(path, "ab") as stream:
                stream.write(b"x")
            with self.assertRaisesRegex(ValueError, "the header"):
                self.prepare.read_idx(path)

    def test_prepare_writes_standardised_nchw_arrays(self):
        with tempfile.TemporaryDirectory() as directory:
            arrays = self.make_source(directory)
            output = os.path.join(directory, "data")
            train, test, mean, std = self.prepare.prepare(directory, output)
            self.assertEqual((train, test), (6, 4))
            x = np.load(os.path.join(output, "train_x.npy"))
            self.assertEqual((x.shape, x.dtype), ((6, 1, 28, 28), np.float32))
            self.assertAlmostEqual(float(x.mean()), 0.0, delta=1e-5)
            self.assertAlmostEqual(float(x.std()), 1.0, delta=1e-4)
            test_x = np.load(os.path.join(output, "test_x.npy"))
            expected = (arrays["t10k-images-idx3-ubyte"] / 255.0 - mean) / std
            np.testing.assert_allclose(test_x[:, 0], expected, rtol=1e-6, atol=1e-6)
            y = np.load(os.path.join(output, "test_y.npy"))
            self.assertEqual((y.dtype, y.tolist()), (np.int32, [3, 4, 5, 6]))

    def test_the_installed_data_set_has_60000_and_10000_images(self):
        source = self.prepare.DEFAULT_SOURCE
        if not os.path.isdir(source):
            self.skipTest(f"{source} absent (dataset-fashion-mnist is not installed)")
        for split, count in (("train", 60000), ("test", 10000)):
            images, labels = self.prepare.read_split(source, split)
            self.assertEqual(images.shape, (count, 28, 28))
            self.assertEqual(sorted(set(labels.tolist())), list(range(10)))

    def test_conv2d_matches_a_direct_sum(self):
        rng = np.random.default_rng(3)
        x, w = rng.normal(size=(2, 3, 7, 6)), rng.normal(size=(4, 3, 3, 3))
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        expected = np.zeros((2, 4, 4, 3))
        for oh in range(4):
            for ow in range(3):
                patch = padded[:, :, 2 * oh:2 * oh + 3, 2 * ow:2 * ow + 3]
                expected[:, :, oh, ow] = np.einsum("nchw,ochw->no", patch, w)
        np.testing.assert_allclose(self.model.conv2d(x, w, (2, 2), (1, 1)), expected,
                                   rtol=1e-12, atol=1e-12)

    def test_batch_norm_modes_and_the_untrained_loss(self):
        config = {"width": 2, "blocks": [1, 1, 1], "batch": 8, "steps": 1,
                  "learning_rate": 0.001, "data_seed": 1}
        variables = self.model.initial_variables(config)
        self.assertEqual(variables["stem.conv.w"].shape, (2, 1, 3, 3))
        self.assertEqual(float(variables["stem.conv.w"][0, 0, 0, 0]),
                         float(np.float32(0.471405 * softwire_random.normal_at(1, [0])[0])))
        rng = np.random.default_rng(4)
        pixels, labels = rng.normal(size=(8, 1, 28, 28)), np.arange(8)
        training = self.model.forward(variables, pixels, labels, config, training=True)
        bn = training["stem.bn"]  # Batch statistics, gamma 1, beta 0: mean 0, variance 1.
        np.testing.assert_allclose(bn.mean(axis=(0, 2, 3)), 0.0, atol=1e-12)
        np.testing.assert_allclose(bn.var(axis=(0, 2, 3)), 1.0, rtol=1e-4)
        evaluation = self.model.forward(variables, pixels, labels, config, training=False)
        np.testing.assert_allclose(evaluation["stem.bn"],  # Running statistics 0 and 1.
                                   evaluation["stem.conv"] / np.sqrt(1 + 1e-5), rtol=1e-12)
        self.assertLess(abs(float(training["loss"]) - math.log(10)), 1.5)

    def test_evaluate_counts_right_answers_per_class(self):
        labels = np.array([0, 1, 1, 2])
        logits = np.zeros((4, 10))
        logits[np.arange(4), [0, 1, 2, 2]] = 50.0
        accuracy, loss, per_class = self.evaluate.evaluate(logits, labels)
        self.assertEqual(accuracy, 0.75)
        self.assertEqual(per_class[:3], [1.0, 0.5, 1.0])
        self.assertTrue(math.isnan(per_class[3]))
        self.assertAlmostEqual(loss, 50.0 / 4, delta=1e-6)


class ScriptsTest(unittest.TestCase):
    def test_every_script_parses(self):
        scripts = [path for path in glob.glob(os.path.join(ROOT, "scripts", "**", "*"),
                                              recursive=True) if os.path.isfile(path)]
        scripts.append(os.path.join(ROOT, ".ci", "run"))
        checked = 0
        for path in scripts:
            with open(path) as script:
                if "bash" not in script.readline():
                    continue
            with self.subTest(path=path):
                result = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, result.stderr)
                checked += 1
        self.assertGreaterEqual(checked, 6)


if __name__ == "__main__":
    if "--protoc" in sys.argv:
        position = sys.argv.index("--protoc")
        PROTOC = sys.argv[position + 1]
        del sys.argv[position:position + 2]
    unittest.main(verbosity=2)
