"""Chapter 10's lab scene (scenes/decoder.py): its state function against the model it runs.

The default tier runs the scene on the tests' tiny GGUF model (the scene's model swapped
in), so every path is exercised in a second: the step t's row is the full pass's row, the
next-token probabilities are the decoding's distribution, the model view holds every head's
row, the logit lens ends at the model's own guess, heads switched off change the text as
the model with them removed does, and bad prompts give notes, never exceptions. The slow
tier runs a few states of SmolLM2 itself."""

import numpy as np
import pytest

from attention_book import smollm
from attention_book.decoding import sampling_distribution, softmax_temperature
from attention_book.scenes import decoder as lab


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = smollm.write_tiny_gguf(tmp_path_factory.mktemp("lab") / "tiny.gguf", seed=2)
    return smollm.SmolLM.load(path, cache=False)


@pytest.fixture()
def scene(tiny, monkeypatch):
    monkeypatch.setattr(lab, "_model", lambda: tiny)
    lab.decoder_generation.cache_clear()
    yield lab
    lab.decoder_generation.cache_clear()


def state(scene, **kw):
    values = {"layer": 1, "head": 2, "n_new": 6, **kw}
    return scene.decoder_state(**values)


def test_the_row_at_step_t_is_the_full_pass_row(scene, tiny):
    prompt = "The cat sat on the mat."
    ids = tiny.encode(prompt)
    for t in (1, 3, 6):
        s = state(scene, prompt=prompt, t=t)
        g = tiny.model.generate(ids, 6)
        assert s.ids == tuple(ids.tolist()) + tuple(g.tokens[:t].tolist())
        assert s.chosen == g.tokens[t - 1] and s.query == len(ids) + t - 2
        full = tiny.model.forward(g.sequence[:len(ids) + t - 1])
        np.testing.assert_allclose(s.row, full.weights[1][2, -1], atol=1e-5)
        np.testing.assert_allclose(s.weights, full.weights[1][2], atol=1e-5)
        assert s.row.sum() == pytest.approx(1, abs=1e-5) and s.T == len(ids) + t
        np.testing.assert_allclose(s.next_p, np.sort(softmax_temperature(g.logits[t - 1]))[::-1][:5],
                                   atol=1e-5)
        assert s.next_ids[0] == s.chosen  # greedy writes the most probable token


def test_sampling_shows_the_distribution_it_samples(scene, tiny):
    s = state(scene, decoding="sampled", temperature=1.5, top_k=5, top_p=0.9, seed=4, t=2)
    g = tiny.model.generate(tiny.encode(s.prompt), 6, temperature=1.5, top_k=5, top_p=0.9,
                            seed=4)
    assert s.chosen == g.tokens[1]
    p = sampling_distribution(g.logits[1], 1.5, 5, 0.9)
    np.testing.assert_allclose(s.next_p, np.sort(p)[::-1][:5], atol=1e-9)
    assert p[s.chosen] > 0
    other = state(scene, decoding="sampled", temperature=1.5, top_k=5, top_p=0.9, seed=5, t=2)
    same = state(scene, decoding="sampled", temperature=1.5, top_k=5, top_p=0.9, seed=4, t=2)
    assert same.ids == s.ids and (other.ids != s.ids or other.next_p == s.next_p)
    greedy = state(scene, t=2, seed=9)  # the seed is not read when greedy
    assert greedy.ids == state(scene, t=2, seed=0).ids


def test_model_view_and_logit_lens(scene, tiny):
    s = state(scene, view="model", t=4)
    assert s.rows.shape == (2, 4, s.query + 1) and s.rows.dtype == np.float32
    np.testing.assert_allclose(s.rows[1, 2], s.row, atol=1e-5)
    np.testing.assert_allclose(s.rows.sum(-1), 1, atol=1e-5)
    lens = state(scene, view="lens", t=4)
    assert len(lens.lens_tokens) == 3 and lens.lens_tokens[-1] == lens.next_tokens[0]
    assert lens.weights.shape == (0, 0)  # only the head view sends the map


def test_kv_groups_and_heads_off(scene, tiny):
    s = state(scene, head=3)
    assert s.group == (2, 3) and s.kv_head == 1  # 4 query heads over 2 key/value heads
    assert (s.n_layers, s.h, s.g) == (2, 4, 2)
    full = tiny.model.forward(s.ids[:s.query + 1]).weights[1]  # (h, T, T)
    np.testing.assert_allclose(s.group_rows, full[[2, 3], s.query], atol=1e-5)
    np.testing.assert_allclose(s.group_rows[1], s.row, atol=1e-12)
    for off, heads in (("head", ((1, 3),)), ("group", ((1, 2), (1, 3))),
                       ("layer", tuple((1, i) for i in range(4)))):
        switched = state(scene, head=3, off=off, t=3)
        assert switched.off == heads
        g = tiny.model.generate(tiny.encode(s.prompt), 6, heads_off=heads)
        assert switched.ids[s.n_prompt:] == tuple(g.tokens[:3].tolist())
        want = softmax_temperature(g.logits[2])
        np.testing.assert_allclose(switched.next_p, np.sort(want)[::-1][:5], atol=1e-5)


def test_a_preset_run_holds_every_state_of_its_generation(scene, tiny):
    """What the browser's gallery stores of a generation (preset_run) gives the state
    function's numbers at every step t: the tokens, the step's distribution, the lens,
    the text and every map."""
    run = scene.preset_run(tiny, "The cat sat on the mat.", False, "sampled", 1.5, 5, 0.9, 4,
                           "layer", n_new=6)
    assert run["off"] == tuple((0, i) for i in range(4))  # the layer of head 0 of layer 0
    for t in (1, 4, 6):
        s = state(scene, prompt="The cat sat on the mat.", decoding="sampled", temperature=1.5,
                  top_k=5, top_p=0.9, seed=4, off="layer", layer=0, head=0, t=t, view="lens")
        assert s.ids == run["ids"][:s.query + 2] and s.tokens == run["pieces"][:s.query + 2]
        assert s.next_ids == tuple(run["next_ids"][t - 1]) and s.generated == run["generated"][-1]
        np.testing.assert_allclose(s.next_p, run["next_p"][t - 1], atol=1e-12)
        assert s.lens_tokens == run["lens_tokens"][t - 1]
        np.testing.assert_allclose(s.lens_p, run["lens_p"][t - 1], atol=1e-12)
        np.testing.assert_allclose(s.row, run["weights"][0, 0, s.query, :s.query + 1], atol=1e-5)
    with pytest.raises(ValueError, match="Type a prompt"):
        scene.preset_run(tiny, " ", False, "greedy", 1.0, 0, 1.0, 0, "none")


def test_the_chat_turn(scene, tiny):
    s = state(scene, prompt="Hi", chat=True)
    assert s.n_prompt == len(tiny.encode(tiny.chat("Hi"))) and s.tokens[0] == "<|im_start|>"


def test_bad_prompts_give_notes(scene):
    for prompt in ("", "   ", None):
        s = state(scene, prompt=prompt)
        assert s.T == 0 and s.notes[0].level == "error" and "Type a prompt" in s.notes[0].text
    s = state(scene, prompt="word " * 200)
    assert s.T == 0 and "the limit is 64" in s.notes[0].text  # the tiny model's context
    with pytest.raises(ValueError, match="view must be one of"):
        state(scene, view="table")
    with pytest.raises(ValueError, match="layer must be a whole number in 0..1"):
        state(scene, layer=2)


def test_past_the_last_token(scene, tiny):
    s = state(scene, t=6, n_new=3)
    assert s.t == 3 and any("past the last written token" in n.text for n in s.notes)


def test_the_declaration():
    scene = lab.SCENE
    assert [c.name for c in scene.controls] == [
        "prompt", "chat", "decoding", "temperature", "top_k", "top_p", "seed", "n_new", "t",
        "layer", "head", "view", "off"]
    sampled = {**scene.defaults, "decoding": "sampled"}
    assert not scene.active(scene.defaults)["seed"] and scene.active(sampled)["seed"]
    for values in scene.suggested:
        scene.values(**values)  # every suggestion is a state the controls can reach
    from attention_book.scenes import SCENES

    assert SCENES["decoder"] is scene and scene.web == "decoder"


@pytest.mark.slow
def test_smollm2_in_the_lab():
    lab.decoder_generation.cache_clear()
    s = lab.decoder_state(prompt=lab.DECODER_PROMPTS[1], n_new=3, t=1, layer=17, head=4)
    assert s.next_tokens[0] == " mat" and s.chosen == s.next_ids[0]
    assert s.group == (3, 4, 5) and s.kv_head == 1
    off = lab.decoder_state(prompt=lab.DECODER_PROMPTS[1], n_new=3, t=1, off="induction")
    assert off.off == lab.induction_heads() and len(off.off) == 4
    assert off.next_tokens[0] == " mat" and off.next_p[0] > s.next_p[0]  # a common phrase:
    # without its induction heads the model is surer of " mat" (0.40 against 0.15), not less
    chat = lab.decoder_state(prompt=lab.DECODER_PROMPTS[2], chat=True, n_new=12, t=6)
    assert "Paris" in chat.generated
