"""The composition root's agent side: the model client, the tools (built-in, weather,
web search and fetch, MCP servers), skills, memory, the turn loop, and the chat
commands that reach them.

:mod:`bot.app` builds what ``ready:`` needs (store, bus, channels, reminders, web) and
hands it over as :class:`~bot.app_parts.ReadyParts`; this half is imported and built right
after ``ready:``, or by whatever needs it first (a replayed message, a test). No turn
can run before the channels are up, and these modules are about 25 ms of a start-up's
imports (measured in ``make bench``'s start-up row).
"""

from __future__ import annotations

import functools

from bot.agent.llm.client import LLMClient
from bot.agent.llm.response import ChatModel
from bot.agent.memory.commands import register_memory_commands
from bot.agent.memory.service import MemoryService
from bot.agent.runner import AgentRunner
from bot.agent.skills.catalog import SkillCatalog
from bot.agent.skills.commands import register_skill_commands
from bot.agent.toolbox import ToolServices
from bot.app_parts import ReadyParts
from bot.config import Settings
from bot.config.channels import enabled_channels
from bot.daemon import AgentSide
from bot.handlers.turn import TurnHandler
from bot.media.intake import MediaIntake
from bot.media.reading import DocumentReader
from bot.media.shown import ImageParts
from bot.media.transcribe import Transcriber
from bot.media.vision import Vision
from bot.messages import InboundMessage
from bot.ops.metrics import CountingToolBox, PrometheusMetrics, counters_by, labelled_counters
from bot.streaming.service import Streaming
from channels.files import ChannelFiles
from tools.loader import build_registry
from tools.mcp import manager as mcp_manager
from tools.mcp import report as mcp_report
from tools.registry import ToolRegistry
from tools.weather import OpenMeteoWeather, weather_command
from tools.web.service import WebTools


def build_model(settings: Settings) -> LLMClient:
    llm = settings.llm
    return LLMClient(
        llm.model,
        api_base=llm.api_base,
        api_key=llm.api_key.get_secret_value(),
        fallback_models=llm.fallback_models,
        timeout_s=llm.timeout_s,
        max_retries=llm.max_retries,
        max_concurrent_calls=llm.max_concurrent_calls,
    )


def build_agent(parts: ReadyParts) -> AgentSide:
    """The agent side over ``parts``; its chat commands join ``parts.commands``."""
    settings = parts.settings
    llm = build_model(settings) if parts.model is None else None
    if llm is not None:
        llm.on_attempt = parts.metrics.model_call
    model: ChatModel = parts.model if parts.model is not None else _require(llm)

    async def user_timezone(msg: InboundMessage) -> str:
        return await parts.reminders.user_timezone(msg.key.channel, msg.user_id)

    weather = OpenMeteoWeather(settings.weather, parts.http)
    parts.commands.register(weather_command(weather, user_timezone))
    tools = build_registry()
    for name, section in settings.workspaces.sections().items():
        tools.disable(name, section.disabled_tools)
    reader = DocumentReader(settings.media)  # one conversion at a time: uploads and web_fetch
    web = WebTools(settings.search, settings.fetch, parts.http, reader=reader)
    parts.metrics.read_metrics(
        counters_by(
            "bot_web_calls", "web_search and web_fetch calls", ("tool", "outcome"), web.counts
        )
    )
    skills = SkillCatalog(parts.workspaces.root)
    memory = MemoryService(parts.storage.memory, settings.memory)
    register_skill_commands(
        parts.commands, skills, is_admin=parts.is_admin, workspace_of=parts.routing.resolve
    )
    register_memory_commands(
        parts.commands, memory, is_admin=parts.is_admin, workspace_of=parts.routing.resolve
    )
    files = ChannelFiles(parts.channels)
    mcp = mcp_manager.MCPManager(settings.mcp, tools)  # connects in the background
    parts.metrics.read_metrics(labelled_counters("server", mcp.counters, mcp_manager.METRICS))
    runner = AgentRunner(
        model,
        CountingToolBox(tools, parts.metrics),
        parts.storage.sessions,
        parts.workspaces,
        timezone=user_timezone,
        max_steps=settings.llm.max_steps,
        context=settings.context,
        model_name=settings.llm.model,
        max_tool_calls=settings.agent.max_tool_calls_per_step,
        services=ToolServices(
            reminders=parts.reminders,
            weather=weather,
            files=files,
            skills=skills,
            memory=memory,
            web=web,
        ),
        skills=skills,
        memory=memory,
        workspace_of=parts.turn_workspace,
        offload=parts.offload,
        media=_media_intake(parts, files, reader),
        images=ImageParts(parts.media, settings.media.keep_images_turns),
    )
    turns = TurnHandler(
        bus=parts.bus,
        commands=parts.commands,
        runner=runner,
        channels=parts.channels,
        metrics=parts.metrics,
        typing_after_s=settings.agent.typing_after_s,
        late_note=parts.late_note,
        streaming=Streaming(
            settings.streaming,
            parts.channels,
            parts.storage.previews,
            runs=parts.runs,
            off=[
                spec.name for spec, section in enabled_channels(settings) if not _streams(section)
            ],
        ),
    )
    return AgentSide(
        runner=runner,
        tools=tools,
        handle=turns.handle,
        background=(mcp,),
        warmup=functools.partial(_warm_up, tools, llm, parts.metrics),
        skills=skills,
        memory=memory,
        mcp_servers=functools.partial(mcp_report.reports, settings.mcp, mcp),
    )


def _media_intake(parts: ReadyParts, files: ChannelFiles, reader: DocumentReader) -> MediaIntake:
    """Pictures, voice and documents users send ([media]): a describing model and a
    transcription model only where one is named."""
    media, llm = parts.settings.media, parts.settings.llm
    describer = None
    if media.vision_model:
        describer = LLMClient(
            media.vision_model,
            api_base=media.vision_api_base,
            api_key=media.vision_api_key.get_secret_value(),
            timeout_s=llm.timeout_s,
            max_retries=llm.max_retries,
        )
    return MediaIntake(
        media,
        parts.media,
        files,
        vision=Vision(media, llm.model, describer),
        transcriber=Transcriber(media, timeout_s=max(llm.timeout_s, 120)),
        reader=reader,
        offload=parts.offload,
    )


def _warm_up(tools: ToolRegistry, llm: LLMClient | None, metrics: PrometheusMetrics) -> None:
    """The metric families and the tools' schema checks (~30 ms with jsonschema's
    import), then litellm's import on its thread; a turn that comes first does what it
    needs itself."""
    metrics.load()
    tools.prepare()
    if llm is not None:
        llm.start_warmup()


def _streams(section: object) -> bool:
    """``[channels.<name>] streaming`` (true where a section has no such key)."""
    return bool(getattr(section, "streaming", True))


def _require(llm: LLMClient | None) -> LLMClient:
    assert llm is not None
    return llm
