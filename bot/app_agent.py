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
import logging

from bot.agent.llm.client import LLMClient
from bot.agent.llm.response import ChatModel
from bot.agent.memory.commands import register_memory_commands
from bot.agent.memory.service import MemoryService
from bot.agent.runner import AgentRunner, TimezoneLookup
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
from bot.workspaces.admins import WorkspaceAdmins
from channels.files import ChannelFiles
from tools.loader import build_registry
from tools.mcp import manager as mcp_manager
from tools.mcp import report as mcp_report
from tools.registry import ToolRegistry
from tools.weather import OpenMeteoWeather, weather_command
from tools.web.service import WebTools

log = logging.getLogger(__name__)


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
        max_answer_chars=settings.agent.max_answer_chars,
        max_output_tokens=llm.max_output_tokens,
    )


def build_agent(parts: ReadyParts) -> AgentSide:
    """The agent side over ``parts``; its chat commands join ``parts.commands``."""
    settings = parts.settings
    model, llm = _chat_model(parts)
    user_timezone = _user_timezone(parts)
    weather = OpenMeteoWeather(settings.weather, parts.http)
    parts.commands.register(weather_command(weather, user_timezone))
    tools = _tool_registry(settings)
    reader = DocumentReader(settings.media)  # one conversion at a time: uploads and web_fetch
    web = _web_tools(parts, reader)
    skills, memory = _skills_and_memory(parts)
    files = ChannelFiles(parts.channels)
    mcp = mcp_manager.MCPManager(settings.mcp, tools)  # connects in the background
    parts.metrics.read_metrics(labelled_counters("server", mcp.counters, mcp_manager.METRICS))
    services = ToolServices(
        reminders=parts.reminders,
        weather=weather,
        files=files,
        skills=skills,
        memory=memory,
        web=web,
    )
    media = _media_intake(parts, files, reader)
    runner = _runner(
        parts, model, tools, user_timezone, services, skills=skills, memory=memory, media=media
    )
    turns = _turn_handler(parts, runner)
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


def _chat_model(parts: ReadyParts) -> tuple[ChatModel, LLMClient | None]:
    """The model turns call: the one given (tests, benches) or the configured litellm
    client, each attempt counted. The client is returned too (None when one was given):
    warm-up imports litellm through it."""
    if parts.model is not None:
        return parts.model, None
    llm = build_model(parts.settings)
    llm.on_attempt = parts.metrics.model_call
    return llm, llm


def _user_timezone(parts: ReadyParts) -> TimezoneLookup:
    """A sender's time zone as the reminder service keeps it (/timezone): the runtime
    block and the weather command read the same one."""

    async def user_timezone(msg: InboundMessage) -> str:
        return await parts.reminders.user_timezone(msg.key.channel, msg.user_id)

    return user_timezone


def _tool_registry(settings: Settings) -> ToolRegistry:
    """The built-in and entry-point tools, less those each workspace disables (a name
    that is no tool turns nothing off: said, with the one likely meant)."""
    tools = build_registry()
    for name, section in settings.workspaces.sections().items():
        tools.disable(name, section.disabled_tools)
    for line in settings.workspaces.unknown_tools(tools.names()):
        log.warning("%s", line)
    return tools


def _web_tools(parts: ReadyParts, reader: DocumentReader) -> WebTools:
    """web_search and web_fetch over the shared HTTP client, their calls counted by tool
    and outcome; ``reader`` converts fetched documents (shared with uploads)."""
    settings = parts.settings
    web = WebTools(
        settings.search,
        settings.fetch,
        parts.http,
        reader=reader,
        result_chars=settings.context.max_tool_result_chars,
    )
    parts.metrics.read_metrics(
        counters_by(
            "bot_web_calls", "web_search and web_fetch calls", ("tool", "outcome"), web.counts
        )
    )
    return web


def _skills_and_memory(parts: ReadyParts) -> tuple[SkillCatalog, MemoryService]:
    """The skill catalog and the memory service, with their chat commands (skills
    first): the tools and the prompt read the same ones."""
    skills = SkillCatalog(parts.workspaces.root)
    memory = MemoryService(parts.storage.memory, parts.settings.memory)
    # The workspace's own admins too, as for /soul: not the global list alone.
    trusted = [c.name for c in parts.channels.values() if c.trusted]
    admins = WorkspaceAdmins(parts.settings.workspaces, parts.settings.admins, trusted)
    register_skill_commands(
        parts.commands, skills, is_admin=admins.is_admin, workspace_of=parts.routing.resolve
    )
    register_memory_commands(
        parts.commands, memory, is_admin=admins.is_admin, workspace_of=parts.routing.resolve
    )
    return skills, memory


def _runner(
    parts: ReadyParts,
    model: ChatModel,
    tools: ToolRegistry,
    timezone: TimezoneLookup,
    services: ToolServices,
    *,
    skills: SkillCatalog,
    memory: MemoryService,
    media: MediaIntake,
) -> AgentRunner:
    """The turn loop: the model, the tools (each call counted), the session history,
    the prompt's sections and what users send (media) and were shown (images)."""
    settings = parts.settings
    return AgentRunner(
        model,
        CountingToolBox(tools, parts.metrics),
        parts.storage.sessions,
        parts.workspaces,
        timezone=timezone,
        max_steps=settings.llm.max_steps,
        context=settings.context,
        model_name=settings.llm.model,
        max_tool_calls=settings.agent.max_tool_calls_per_step,
        services=services,
        skills=skills,
        memory=memory,
        workspace_of=parts.turn_workspace,
        offload=parts.offload,
        media=media,
        images=ImageParts(parts.media, settings.media.keep_images_turns),
        max_output_tokens=settings.llm.max_output_tokens,
    )


def _turn_handler(parts: ReadyParts, runner: AgentRunner) -> TurnHandler:
    """One inbound message to a command or a turn of ``runner``; answers stream where
    the channel's section leaves ``streaming`` on."""
    settings = parts.settings
    return TurnHandler(
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
            end_turn=parts.end_turn,
            delivering=parts.delivering,
            off=[
                spec.name for spec, section in enabled_channels(settings) if not _streams(section)
            ],
        ),
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
