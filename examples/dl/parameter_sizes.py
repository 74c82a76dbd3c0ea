#!/usr/bin/python3
"""Prints, as JSON, what the trainer's communication is computed from: the model's parameters in
registration order (elements each; backward produces their gradients in reverse), its state_dict
tensors (elements and bytes per element: what set-up broadcasts) and its optimizer parameter
groups. Usage: parameter_sizes.py [--model small]"""
import argparse
import json

import models


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=models.MODEL_NAMES, default="small")
    model, _ = models.build_model(parser.parse_args().model)
    print(json.dumps({
        "parameters": [{"name": name, "elements": p.numel()}
                       for name, p in model.named_parameters() if p.requires_grad],
        "state_dict": [{"name": name, "elements": t.numel(), "element_bytes": t.element_size()}
                       for name, t in model.state_dict().items()],
        "param_groups": 1,
    }, indent=1))


if __name__ == "__main__":
    main()
