#!/usr/bin/env python3
"""Calibration agent `do_nothing`: declines everything, calls no tool.

An eval that cannot fail this agent where something had to be done measures
nothing. Protocol v1 (docs/agent-protocol.md); standard library only."""

from calibration import say, serve

serve(lambda conversation: say("I can't help with that, sorry."))
