#!/usr/bin/python3
"""Export a zoo of real architectures (random weights, fixed seeds) the way their users export them, for
bench/zoo.py: torchvision classification, segmentation, video and detection models, small GRU/LSTM models (torch.nn, short
sequences) and (when the transformers package is importable) small Hugging Face encoders and decoders.

Usage (a Python with torch and torchvision; transformers optional):
    /usr/bin/python3 models/scripts/export_zoo.py OUTDIR [NAME...]

For each model NAME this writes OUTDIR/NAME.onnx, one OUTDIR/NAME__<input>.npy per graph input, and
OUTDIR/NAME.json ({"inputs": [...], "outputs": [...], "family": ...}); the recurrent models also write
PyTorch's output, OUTDIR/NAME__torch_output.npy. Unlike export_models.py these are
standard eval-mode exports (BatchNormalization folded into the Convs by the exporter, opset 17): what a user
gets from torch.onnx.export. BatchNormalization statistics are randomised first, so the folding matters.
A model the installed torch cannot export is reported and skipped. NAME... picks models; --list lists them.
"""
import json
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

warnings.filterwarnings("ignore")
OPSET = 17


def classification(name, shape=(1, 3, 224, 224), **kw):
    def build():
        return getattr(torchvision.models, name)(weights=None, **kw), {"input": torch.randn(*shape)}
    return build


def segmentation(name):
    def build():
        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, aux_loss=None)
        return m, {"input": torch.randn(1, 3, 224, 224)}
    return build


def video(name):
    def build():
        return getattr(torchvision.models.video, name)(weights=None), {"input": torch.randn(1, 3, 8, 112, 112)}
    return build


def detection(name):
    def build():
        m = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None)
        return m, {"input": torch.rand(3, 320, 320)}
    return build


def hf(name):
    def build():
        import transformers as T
        ids = torch.randint(0, 1000, (2, 48))
        mask = torch.ones(2, 48, dtype=torch.long)
        mask[1, 40:] = 0
        small = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
                     vocab_size=1000)
        text = {"input_ids": ids, "attention_mask": mask}
        if name == "bert":
            return T.BertModel(T.BertConfig(**small)), text
        if name == "gpt2":
            return T.GPT2Model(T.GPT2Config(n_embd=256, n_layer=4, n_head=4, vocab_size=1000)), {"input_ids": ids}
        if name == "t5_encoder":
            return T.T5EncoderModel(T.T5Config(d_model=256, d_kv=64, d_ff=1024, num_layers=4, num_heads=4,
                                               vocab_size=1000)), text
        if name == "llama":
            return T.LlamaModel(T.LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                                              num_attention_heads=4, vocab_size=1000)), text
        if name == "convbert":
            return T.ConvBertModel(T.ConvBertConfig(**small)), text
        if name == "vit":
            return T.ViTModel(T.ViTConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                          intermediate_size=1024)), {"pixel_values": torch.randn(1, 3, 224, 224)}
        if name == "whisper_encoder":
            cfg = T.WhisperConfig(d_model=256, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                  decoder_attention_heads=4, encoder_ffn_dim=512, decoder_ffn_dim=512)
            return T.WhisperModel(cfg).get_encoder(), {"input_features": torch.randn(1, 80, 3000)}
        if name == "wav2vec2":
            cfg = T.Wav2Vec2Config(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512)
            return T.Wav2Vec2Model(cfg), {"input_values": torch.randn(1, 16000)}
        raise KeyError(name)
    return build


def recurrent(cell, input_size, hidden, seq, batch, **kw):
    """A torch.nn.GRU/LSTM over a short sequence (one ONNX GRU/LSTM node per layer): the small recurrent models
    where per-step overhead shows. Output: the last layer's Y, [seq, batch, num_directions * hidden]."""
    def build():
        m = getattr(torch.nn, cell)(input_size, hidden, **kw)
        return m, {"input": torch.randn(seq, batch, input_size)}
    return build


MODELS = {
    **{n: ("classification", classification(n)) for n in (
        "squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0", "mobilenet_v3_small", "mobilenet_v3_large",
        "regnet_x_400mf", "regnet_y_400mf", "densenet121", "resnext50_32x4d", "convnext_tiny",
        "efficientnet_v2_s", "maxvit_t")},
    "googlenet": ("classification", classification("googlenet", aux_logits=False, init_weights=True)),
    "inception_v3": ("classification", classification("inception_v3", (1, 3, 299, 299), aux_logits=False,
                                                      init_weights=True)),
    **{n: ("segmentation", segmentation(n)) for n in ("fcn_resnet50", "deeplabv3_mobilenet_v3_large",
                                                      "lraspp_mobilenet_v3_large")},
    **{n: ("video", video(n)) for n in ("r3d_18", "r2plus1d_18")},
    **{n: ("detection", detection(n)) for n in ("ssdlite320_mobilenet_v3_large", "fasterrcnn_mobilenet_v3_large_320_fpn",
                                                "retinanet_resnet50_fpn", "maskrcnn_resnet50_fpn")},
    **{n: ("transformers", hf(n)) for n in ("bert", "gpt2", "t5_encoder", "llama", "convbert", "vit",
                                            "whisper_encoder", "wav2vec2")},
    "gru_h128_s16_b1": ("recurrent", recurrent("GRU", 64, 128, 16, 1)),
    "lstm_h128_s16_b1": ("recurrent", recurrent("LSTM", 64, 128, 16, 1)),
    "gru_h64_s32_b4_bidir": ("recurrent", recurrent("GRU", 32, 64, 32, 4, bidirectional=True)),
    "lstm_h256_s32_b4_2layer": ("recurrent", recurrent("LSTM", 128, 256, 32, 4, num_layers=2)),
}


class Wrapped(torch.nn.Module):
    """The model with its inputs as positional tensors and its outputs as a flat tuple of tensors."""

    def __init__(self, m, names, family):
        super().__init__()
        self.m, self.names, self.family = m, names, family

    def forward(self, *xs):
        if self.family == "detection":
            r = self.m([xs[0]])[0]
            return r["boxes"], r["scores"], r["labels"]
        if self.family == "transformers":
            return self.m(**dict(zip(self.names, xs))).last_hidden_state
        if self.family == "recurrent":
            return self.m(*xs)[0]
        r = self.m(*xs)
        return r["out"] if isinstance(r, dict) else r  # segmentation models return a dict


def export(out, name):
    family, build = MODELS[name]
    torch.manual_seed(1234)
    m, inputs = build()
    m.eval()
    for mod in m.modules():  # non-trivial statistics, so that folding BatchNormalization changes the weights
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
    names = list(inputs)
    w = Wrapped(m, names, family).eval()
    outputs = ["boxes", "scores", "labels"] if family == "detection" else ["output"]
    with torch.no_grad():
        torch.onnx.export(w, tuple(inputs[n] for n in names), os.path.join(out, name + ".onnx"), opset_version=OPSET,
                          input_names=names, output_names=outputs)
    for n in names:
        np.save(os.path.join(out, f"{name}__{n}.npy"), inputs[n].numpy())
    if family == "recurrent":  # PyTorch's own output, to check an engine's rounding against
        with torch.no_grad():
            np.save(os.path.join(out, f"{name}__torch_output.npy"), w(*(inputs[n] for n in names)).numpy())
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"inputs": names, "outputs": outputs, "family": family}, f)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        print("\n".join(MODELS))
        return 0
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out, names = sys.argv[1], sys.argv[2:] or list(MODELS)
    os.makedirs(out, exist_ok=True)
    for name in names:
        if name not in MODELS:
            sys.exit(f"export_zoo.py: unknown model '{name}' (--list lists them)")
        try:
            export(out, name)
            print(f"exported {name}", flush=True)
        except Exception as e:  # an architecture this torch cannot export: reported, skipped
            print(f"skipped {name}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
