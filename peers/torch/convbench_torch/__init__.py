"""The PyTorch peer of convbench (`cargo convbench peers --peer torch`); see peer.py."""
