"""The Transformer family (Vaswani et al. 2017), in reading order:
attention.py (multi-head scaled dot-product attention, the reference and the
fused kernel), embedding.py (tokens and positions), layers.py (the residual
sublayer, the feed-forward, the encoder and decoder layers), model.py (the
stacks behind the model interface, the builder, the registration).
"""
