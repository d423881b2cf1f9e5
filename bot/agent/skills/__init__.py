"""Skills: ``skills/<name>/SKILL.md`` folders of instructions the model reads when needed."""
